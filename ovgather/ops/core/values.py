"""What the walk carries along an edge, and the helpers the ordinary op rules share.

A :class:`Tensor` is an output port as the walk sees it: its partial shape, its element
type, and for small integer tensors its *value with bounds*. OpenVINO computes reshape
targets at run time (``ShapeOf → Gather → Concat → Reshape``) and, when it reads a model,
propagates the lower and upper bound of every element of such a tensor so that the
Reshape still gets a precise output shape (``evaluate_lower``/``evaluate_upper``). ovgather
does the same: a value is a pair of flat row-major tuples ``(lower, upper)``; ``INF`` is
an unbounded upper end and ``-INF`` an unbounded lower end, so an element nobody knows is
``(-INF, INF)``. An exact value has ``lower == upper``.

Attributes arrive as the IR writes them (text), in an ``spec.Attrs`` whose typed readers
raise :class:`~ovgather.errors.ShapeInferenceError` when the text is of the wrong kind,
so the walk reports that layer as ``invalid`` instead of crashing.
"""

from __future__ import annotations

from ..._lazy import numpy as np
from ...element_types import INT_TYPES
from ...errors import ShapeInferenceError
from ...shapes import INF, Dimension, PartialShape

__all__ = [
    "INF",
    "NINF",
    "UNBOUNDED",
    "Value",
    "Tensor",
    "exact_ints",
    "exact_scalar",
    "dim_of_bounds",
    "computed_shape_bounds",
    "value_of_dims",
    "shape_of_len",
    "MAX_VALUE_SIZE",
    "INT_TYPES",
    "static_size",
    "bound_arrays",
    "value_of_arrays",
]

NINF = -INF
#: Upper bounds from here on mean "none": OpenVINO's i32 ShapeOf writes the i32 maximum.
UNBOUNDED = 2147483647
#: Tensors with more elements than this are not tracked as values.
MAX_VALUE_SIZE = 1024
#: Exact values with more elements than this are kept as a NumPy array (``Tensor._pack``).
PACKED_SIZE = 64

Value = tuple[tuple[int, ...], tuple[int, ...]]


class Tensor:
    """One output port during the walk: shape, element type, value bounds (or None).

    ``value`` may be given as a zero-argument callable (``load``) instead: a Const's data
    is then read from the weights only when a rule first asks for it, which keeps the
    walk cheap on models with thousands of Consts nobody reads.

    Two facts about the producing layer, which some OpenVINO rules read from the graph
    rather than from values: ``const`` is True for a Const layer's output; ``parts`` is
    set on a 1-D Concat of one-element inputs whose value is unknown, one entry per
    element, the element when that input is a Const, else None (Broadcast reads its
    target from them, as OpenVINO's Broadcast looks through such a Concat).

    A Const of a packed type has no ``value``: OpenVINO reads its bytes as they are where
    a shape is read from it (a u4 Broadcast target of ``[2,3,4,1]`` is ``[50,20,..]`` and
    u1 is refused), and decodes them only in a Convert, which reads ``unpacked`` (a
    zero-argument callable giving the value as OpenVINO unpacks it).
    """

    __slots__ = ("shape", "etype", "_value", "_load", "const", "parts", "_array", "unpacked")

    def __init__(self, shape: PartialShape, etype: str = "dynamic",
                 value: Value | None = None, load=None, const: bool = False) -> None:
        self.shape = shape
        self.etype = etype
        self._value = value
        self._load = load
        self.const = const
        self.parts: tuple[int | None, ...] | None = None
        self._array = None
        #: a Const of a packed type (u4, nf4, ...): its value, read only by a Convert
        self.unpacked = None
        if value is not None and len(value[0]) > PACKED_SIZE:
            self._pack()

    def _pack(self) -> None:
        """Keep a large exact value as one NumPy array rather than a tuple of Python
        numbers (8 bytes an element, not 40): a chain of thousands of ops on a
        1,024-element value would otherwise hold gigabytes for the whole walk."""
        lo, hi = self._value
        if lo is not hi and lo != hi:
            return
        kinds = set(map(type, lo))
        if kinds == {int}:
            try:
                arr = np.array(lo, dtype=np.int64)
            except OverflowError:  # u64 values past the int64 range
                return
        elif kinds == {float}:
            arr = np.array(lo, dtype=np.float64)
        else:
            return
        arr.flags.writeable = False
        self._array, self._value = arr, None

    @property
    def pending(self) -> bool:
        """A Const's data not read yet: asking for :attr:`value` reads it."""
        return self._load is not None

    @property
    def value(self) -> Value | None:
        if self._load is not None:
            self._value, self._load = self._load(), None
            if self._value is not None and len(self._value[0]) > PACKED_SIZE:
                self._pack()
        if self._array is not None:  # built on each ask: only the array stays
            v = tuple(self._array.tolist())
            return v, v
        return self._value

    @property
    def packed(self):
        """The exact value as a flat read-only array when it is kept packed, else None."""
        return self._array

    def __repr__(self) -> str:
        return f"Tensor({self.shape!r}, {self.etype!r}, {self.value!r})"


# -- values ----------------------------------------------------------------------------
def exact_ints(t: Tensor) -> tuple[int, ...] | None:
    """The value of ``t`` when every element is known exactly, else None."""
    v = t.value
    if v is None or v[0] != v[1]:
        return None
    return v[0]


def exact_scalar(t: Tensor) -> int | None:
    """The single exact element of a scalar or one-element tensor, else None."""
    v = exact_ints(t)
    return v[0] if v is not None and len(v) == 1 else None


def dim_of_bounds(lo: int, hi: int) -> Dimension:
    """A shape dimension from the bounds of one shape-tensor element (as Reshape reads it)."""
    if hi >= UNBOUNDED:  # the i32/i64 maximum: no upper bound (the lower one stays)
        hi = INF
    if lo < 0:
        lo = 0
    if hi < lo:
        return Dimension.dynamic()
    return Dimension.from_bounds(lo, hi)


def computed_shape_bounds(t: Tensor, what: str) -> None:
    """Raise when a shape input computed by other layers may hold a negative size.

    OpenVINO reads a shape from a Const's data (where -1 means ``?``), and otherwise from
    the value bounds it propagates; a bound below 0 there is an error, not a ``?``, even
    when only the lower one is (``ShapeOf(x) - 3`` with ``x`` in ``1..10``). Unknown ends
    (``-INF``) are not bounds and pass.

    >>> from ovgather.shapes import PartialShape as P
    >>> computed_shape_bounds(Tensor(P([1]), "i64", ((-2,), (7,))), "the sizes")
    Traceback (most recent call last):
    ...
    ovgather.errors.ShapeInferenceError: the sizes must not be negative, but element 0 \
may be as low as -2 (its bounds are -2..7)
    """
    v = t.value
    if t.const or v is None:
        return
    for i, (lo, hi) in enumerate(zip(*v, strict=True)):
        if hi < 0 or NINF < lo < 0:
            raise ShapeInferenceError(
                f"{what} must not be negative, but element {i} may be as low as {lo} "
                f"(its bounds are {lo}..{hi})")


def value_of_dims(dims: tuple[Dimension, ...]) -> Value:
    """The bounds of a ShapeOf output: each dim's interval."""
    return tuple(d.lo for d in dims), tuple(d.hi for d in dims)



def shape_of_len(t: Tensor) -> int | None:
    """The number of elements of a rank-0/1 tensor with a static length, else None."""
    dims = t.shape.dims
    if dims is None or len(dims) > 1:
        return None
    if not dims:
        return 1
    d = dims[0]
    return d.lo if d.lo == d.hi else None


def static_size(shape: PartialShape) -> int | None:
    """The element count of a static shape, None otherwise."""
    dims = shape.dims
    if dims is None:
        return None
    n = 1
    for d in dims:
        if d.lo != d.hi:
            return None
        n *= d.lo
    return n


def bound_arrays(t: Tensor):
    """The lower and the upper bounds of ``t`` as two arrays of its static shape, None when
    it has no value or no static shape. The arrays hold Python ints (dtype object), so
    ``INF`` and what ops make of it stay exact; ops that move elements (scatter, pad) move
    both alike, as OpenVINO moves its lower and upper bound tensors.

    >>> from ovgather.shapes import PartialShape as P
    >>> lo, hi = bound_arrays(Tensor(P.parse("[2,1]"), "i64", ((1, 2), (3, 2))))
    >>> hi.tolist()
    [[3], [2]]
    """
    v, size = t.value, static_size(t.shape)
    if v is None or size is None or size != len(v[0]):
        return None
    dims = [d.lo for d in t.shape.dims]
    return tuple(np.array(side, dtype=object).reshape(dims) for side in v)


def value_of_arrays(lo, hi) -> Value:
    """A value from the two bound arrays :func:`bound_arrays` gives (row-major)."""
    return tuple(lo.ravel().tolist()), tuple(hi.ravel().tolist())
