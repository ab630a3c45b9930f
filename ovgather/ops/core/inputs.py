"""How ``validate`` makes valid concrete inputs for an op: the input makers' base and the
helpers they share.

An op's spec names an :class:`InputMaker` (``OpSpec.inputs``). For one layer, ``validate``
asks it which attribute values to run with (:meth:`InputMaker.params`), concrete sizes
inside the layer's partial shapes that the op accepts (:meth:`InputMaker.sizes`), random
indices the runtime defines (:meth:`InputMaker.indices`) and data sizes that constant
indices fit (:meth:`InputMaker.fit_const`). A layer for which no valid inputs exist raises
:class:`NoValidInputs`, which ``validate`` turns into the layer's ``skipped`` or
``invalid`` row. The makers live in the op files, next to the rules they must satisfy
(``gather_nd.GatherNDInputs`` …), so that a new version of an op is one entry of its
file's ``specs_of``.

>>> rng = np.random.default_rng(0)
>>> pick(rng, Dimension.parse("3")), pick(rng, Dimension.parse("2..4")) in (2, 3, 4)
(3, True)
>>> pick_merged(rng, Dimension.parse("2"), Dimension.parse("3"))
Traceback (most recent call last):
...
ovgather.ops.core.inputs.NoValidInputs: no input sizes fit this layer: dims 2 and 3 must be equal \
(OpenVINO accepts the partial shapes, but no concrete inputs can run)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..._lazy import numpy as np
from ...errors import UnsupportedOpError
from ...shapes import Dimension, PartialShape
from . import registry
from .spec import Attrs
from .values import Tensor

__all__ = [
    "SPAN",
    "NoValidInputs",
    "Params",
    "InputMaker",
    "maker",
    "pick_sizes",
    "random_indices",
    "random_data",
    "pick",
    "pick_merged",
    "rank_or",
    "dims_or",
    "uniform",
    "reach",
    "grow_to_fit",
    "const_out_of_range",
]

#: Largest size picked for a dim whose upper bound is open (keeps inputs small).
SPAN = 5


class NoValidInputs(Exception):
    """No inputs ovgather can run exist for this layer; ``status`` is the row's verdict
    (``skipped``: ovgather cannot run it; ``invalid``: the runtime defines nothing)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class Params:
    """The attribute values a layer runs with, as numbers; ``axis_type`` is the element
    type of an axis given as an input (the runtime builds it as a Constant of that type)."""

    batch_dims: int = 0
    axis: int = 0
    axis_type: str = "i64"


class InputMaker:
    """How to make valid inputs for one op version; an op file subclasses it.

    ``n_inputs``: the inputs the layer must have connected to be run.
    """

    n_inputs = 2

    def params(self, attrs: Attrs, ins: list[Tensor]) -> Params:
        """The layer's attribute values; NoValidInputs when it cannot be run on its own,
        ShapeInferenceError (from ``attrs``) when an attribute is not of its kind."""
        return Params()

    def sizes(self, rng: np.random.Generator, data: PartialShape, indices: PartialShape,
              p: Params) -> tuple[list[int], list[int]]:
        """Concrete data and indices shapes inside the partial ones that the op accepts."""
        raise NotImplementedError

    def indices(self, rng: np.random.Generator, data_shape: Sequence[int],
                indices_shape: Sequence[int], dtype: np.dtype, p: Params,
                out_of_range: bool = True) -> np.ndarray:
        """Random indices whose values the runtime defines; out-of-range ones too where
        it defines them and ``out_of_range`` allows."""
        raise NotImplementedError

    def fit_const(self, data: PartialShape, dsize: list[int], indices: np.ndarray,
                  p: Params) -> list[int]:
        """``dsize`` grown where the partial shape allows so that constant (non-empty)
        ``indices`` are defined; NoValidInputs when the runtime defines nothing."""
        return dsize

    def out_of_range_defined(self, data_rank: int, dtype: np.dtype) -> bool:
        """Whether the runtime defines out-of-range indices for data of this rank and type."""
        return False


# -- by op type and version ------------------------------------------------------------------
def maker(op_type: str, version: int | None = None) -> InputMaker:
    """The input maker of ``op_type``-``version`` (the newest version when None)."""
    versions = registry.specs(op_type)
    spec = versions[-1] if version is None and versions else registry.spec(op_type, version)
    if spec.inputs is None:
        raise UnsupportedOpError(f"ovgather makes no inputs for {spec.name}")
    return spec.inputs


def pick_sizes(rng: np.random.Generator, op_type: str, data: PartialShape,
               indices: PartialShape, batch_dims: int = 0, axis: int = 0,
               version: int | None = None) -> tuple[list[int], list[int]]:
    """Concrete data and indices shapes inside the partial shapes that ``op_type`` accepts
    (its maker's :meth:`InputMaker.sizes`)."""
    return maker(op_type, version).sizes(rng, data, indices, Params(batch_dims, axis))


def random_indices(rng: np.random.Generator, op_type: str, version: int,
                   data_shape: Sequence[int], indices_shape: Sequence[int], dtype: np.dtype,
                   batch_dims: int = 0, axis: int = 0, out_of_range: bool = True) -> np.ndarray:
    """Random indices that ``op_type``-``version`` defines (its maker's
    :meth:`InputMaker.indices`)."""
    return maker(op_type, version).indices(rng, data_shape, indices_shape, np.dtype(dtype),
                                           Params(batch_dims, axis), out_of_range)


# -- the shared helpers ------------------------------------------------------------------------
def random_data(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """Random values of ``dtype``: normal floats, small integers, coin-flip bools."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        values = rng.random(shape, dtype=np.float32 if dtype.itemsize <= 4 else np.float64)
        values *= 8  # in place: a big input is not made three times over
        values -= 4
        return values.astype(dtype, copy=False)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True,
                        dtype=dtype)


def pick(rng: np.random.Generator, dim: Dimension, low: int = 1, high: int | None = None) -> int:
    """A size inside ``dim`` (at least ``low`` when the bounds allow, at most ``high``)."""
    if dim.lo == dim.hi:
        return dim.lo
    lo = max(dim.lo, min(low, dim.hi))
    hi = min(dim.hi, lo + SPAN - 1) if high is None else min(dim.hi, max(high, lo))
    return int(rng.integers(lo, hi + 1))


def pick_merged(rng: np.random.Generator, a: Dimension, b: Dimension) -> int:
    """One size for two dims that must be equal (a batch dim shared by data and indices)."""
    merged = a.merge(b)
    if merged is None:
        raise NoValidInputs("skipped", f"no input sizes fit this layer: dims {a} and {b} must "
                                       "be equal (OpenVINO accepts the partial shapes, but no "
                                       "concrete inputs can run)")
    return pick(rng, merged)


def rank_or(rng: np.random.Generator, shape: PartialShape, least: int) -> int:
    """The rank of ``shape``, or ``least`` or one more when it is unknown."""
    return shape.rank if shape.rank is not None else least + int(rng.integers(0, 2))


def dims_or(shape: PartialShape, rank: int) -> list[Dimension]:
    """The dims of ``shape``, or ``rank`` dynamic dims when its rank is unknown."""
    return list(shape.dims) if shape.dims is not None else [Dimension.dynamic()] * rank


def uniform(rng: np.random.Generator, shape: Sequence[int], lo: int, hi: int,
            dtype: np.dtype) -> np.ndarray:
    """Integers in ``[lo, hi]`` that ``dtype`` holds (zeros when it holds none)."""
    info = np.iinfo(dtype)
    lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    if hi < lo:
        return np.zeros(shape, dtype)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def reach(indices: np.ndarray) -> int:
    """The smallest dim size for which every index lies in [-s, s-1]."""
    flat = indices.astype(np.int64, copy=False)
    return int(max(flat.max() + 1, -flat.min()))


def grow_to_fit(data: PartialShape, dsize: list[int], targets: Iterable[int],
                need: Iterable[int]) -> tuple[int, int] | None:
    """Grow each data size at ``targets`` to its ``need`` where the partial shape allows
    (in place); the first (dim, need) that still does not fit, or None."""
    dims = dims_or(data, len(dsize))
    for t, n in zip(targets, need, strict=True):
        if dsize[t] < n <= dims[t].hi:
            dsize[t] = max(n, dims[t].lo)
        if dsize[t] < n:
            return t, n
    return None


def const_out_of_range(op: str, dsize: list[int], short: tuple[int, int],
                       consequence: str) -> NoValidInputs:
    """The ``invalid`` verdict on constant indices the runtime does not define."""
    t, n = short
    return NoValidInputs("invalid", f"constant {op} indices must lie in [-s, s-1] for data dim "
                                    f"{t} of size {dsize[t]}, but they reach {n}; the runtime "
                                    f"{consequence}")
