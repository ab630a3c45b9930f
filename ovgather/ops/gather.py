"""Gather-1, Gather-7 and Gather-8: output shapes.

``D[:axis] + I[b:] + D[axis+1:]``, the first ``b`` (batch_dims) dims being data and
indices merged. Gather-1 has no batch_dims; Gather-7 and -8 take a negative one as
counted from the indices rank::

    >>> gather_shape("[2,3,4]", "[2,5]", axis=1)
    PartialShape('[2,2,5,4]')
    >>> gather_shape("[2..5,3]", "[4..8,3,4]", axis=-1, batch_dims=1)
    PartialShape('[4..5,3,4]')
    >>> gather_shape("[2,3,4]", "[2,5]", axis=1, batch_dims=-1)
    PartialShape('[2,5,4]')

The axis is an input (a Constant, scalar or one element). When it is not a known
constant (``axis=None``) the rank is still known, and only the batch dims are::

    >>> gather_shape("[2..5,3]", "[?,3,4]", axis=None, batch_dims=1)
    PartialShape('[2..5,?,?]')

OpenVINO's order (gather_shape_inference.hpp, checked on 2026.4.1): Gather-7/8 want an
integer indices type; the axis input holds one element; batch_dims is normalised by the
indices rank; a known axis is normalised by the data rank (``[-r, r-1]``, a scalar takes
-1 and 0) and must not be below batch_dims; batch_dims must not exceed the indices rank;
then, with both ranks known, the batch dims must be compatible. Any unknown rank gives
``[...]``.

A batch_dims below ``-rank(indices)`` is nonsense that OpenVINO nevertheless answers: it
keeps it negative and reads dims with Python-style negative indexes, raising only when
one falls outside the shape. This rule reproduces that answer, so that ovgather rejects
exactly what OpenVINO rejects::

    >>> gather_shape("[2,3,4]", "[2,5]", axis=1, batch_dims=-4)
    PartialShape('[2,2,5,2,5,4]')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import numpy as _np
from ..element_types import is_integral_number, numpy_dtype
from ..errors import ReferenceInputError
from ..shapes import (
    DYNAMIC,
    DYNAMIC_RANK,
    PartialShape,
    ShapeLike,
    as_partial_shape,
    normalize_axis,
)
from .core import arrays, inputs, numeric, registry
from .core.arrays import index_array, prod, reach_message, require_same_batch, table_size
from .core.spec import Attrs, Checks, Trace, specs_of
from .core.values import Tensor, exact_ints, exact_scalar

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["infer_gather", "gather_shape"]

#: The op type this file serves (what a layer's ``type`` says).
OP_TYPE = "Gather"


def infer_gather(
    data: PartialShape,
    indices: PartialShape,
    axis: int | None,
    batch_dims: int,
    version: int,
    indices_type: str | None = None,
    axis_shape: PartialShape | None = None,
    trace: Trace | None = None,
) -> PartialShape:
    """The output shape of Gather-``version`` (1, 7 or 8), or ShapeInferenceError.

    ``axis`` None means the axis input is not a known constant; ``axis_shape`` is the
    shape of that input when known (None skips its check). Gather-1 ignores batch_dims.
    ``trace`` records every check for ``explain``.

    >>> str(infer_gather(PartialShape.parse("[2,3,4]"), PartialShape.parse("[5]"), 0, 0, 1))
    '[5,3,4]'
    """

    def seen() -> str:
        what = f"but got data {data}, indices {indices}, axis={'unknown' if axis is None else axis}"
        return what if version == 1 else what + f", batch_dims={batch_dims}"

    check = Checks(trace, lambda: f"Gather-{version}", seen)
    if trace is not None:
        check.fact("axis", axis)
        if version != 1:
            check.fact("batch_dims", batch_dims)
    if version != 1 and indices_type is not None:
        check.require(is_integral_number(indices_type), "the indices must be of an integer type",
                      lambda: f"indices are {indices_type}")
    if axis_shape is not None and axis_shape.is_static:
        a = axis_shape.dims
        check.require(len(a) == 0 or (len(a) == 1 and a[0].lo == 1),
                      "the axis input must be a scalar or hold one element",
                      lambda: f"its shape is {axis_shape}")
    d, i = data.dims, indices.dims
    b = 0 if version == 1 else batch_dims
    if b < 0 and i is not None:
        b += len(i)
    if axis is not None:
        axis = _checked_axis(axis, b, d, check)
    if i is not None:
        check.require(b <= len(i), "batch_dims must not exceed the rank of indices",
                      lambda: f"{b} > {len(i)}" if b > len(i) else f"{b} <= {len(i)}")
    if d is None or i is None:
        check.note("both ranks must be known to build the output",
                   "a rank is unknown, so the output is of dynamic rank")
        return DYNAMIC_RANK
    return PartialShape.of(_known_ranks(d, i, axis, b, check))


def _known_version(version: int) -> None:
    """A version SPECS holds (Gather-1 ignores batch_dims, from Gather-7 on it counts)."""
    registry.spec(OP_TYPE, version)


def _checked_axis(axis: int, b: int, d, check: Checks) -> int:
    """The axis normalised by a known data rank; it must not be below batch_dims."""
    if d is not None:
        at = normalize_axis(axis, len(d))
        top = max(len(d), 1)
        check.require(at is not None, lambda: f"the axis must lie in [-{top}, {top - 1}] for "
                      f"data of rank {len(d)}", lambda: f"axis = {axis}")
        axis = at
    if b >= 0 and axis >= 0:
        check.require(axis >= b, "batch_dims must not exceed the axis once both are normalised",
                      lambda: f"{b} > {axis}" if b > axis else f"{b} <= {axis}")
    return axis


def _known_ranks(d, i, axis: int | None, b: int, check: Checks) -> tuple:
    """The output dims once both ranks are known, filled as OpenVINO fills them."""
    out_rank = len(d) + len(i) - 1 - b
    check.require(out_rank >= 0, "the output must not have a negative rank",
                  lambda: f"rank(data) + rank(indices) - 1 - batch_dims = {out_rank}")
    batch = _batch(d, i, b, out_rank, check)
    if axis is None:
        check.note("output = D[:axis] + I[b:] + D[axis+1:]",
                   "the axis is not a constant: only the batch dims and the rank are known")
        return (*batch, *(DYNAMIC,) * (out_rank - len(batch)))
    check.require(len(d) > 0, "data must have rank at least 1 to gather along a known axis",
                  lambda: f"rank {len(d)}")  # at rank 0 OpenVINO would write past the output
    if b >= 0:
        out = (*batch, *d[b:axis], *i[b:], *d[axis + 1 :])
    else:
        # b < 0 only for batch_dims < -rank(indices): OpenVINO reads indices[b:] with
        # negative positions, so dims repeat, until one falls off the front
        for n in range(b, len(i)):
            check.require(-len(i) <= n, f"batch_dims must be at least -2 * rank(indices) = "
                          f"{-2 * len(i)}")
        out = (*d[:axis], *(i[n] for n in range(b, len(i))), *d[axis + 1 :])
    check.note("output = D[:axis] + I[b:] + D[axis+1:]",
               lambda: f"axis = {axis}, b = {b} -> {PartialShape.of(out)}")
    return out


def _compared(b: int, limit: int) -> str:
    """``2 <= 4`` or ``5 > 4``: the comparison that holds, as a step of ``explain`` says it."""
    return f"{b} <= {limit}" if b <= limit else f"{b} > {limit}"


def _batch(d, i, b: int, out_rank: int, check: Checks) -> list:
    """The first ``b`` dims of data and indices, merged; empty when ``b <= 0``."""
    batch = []
    for n in range(b):
        check.require(n < len(d), "batch_dims must not exceed the rank of data",
                      lambda: _compared(b, len(d)))  # only when the axis is unknown
        check.require(n < out_rank, "batch_dims must not exceed the output rank "
                      "rank(data) + rank(indices) - 1 - batch_dims",
                      lambda: _compared(b, out_rank))
        merged = d[n].merge(i[n])
        check.require(merged is not None, "the leading batch_dims dims of data and indices "
                      "must match", lambda n=n: f"dim {n}: {d[n]} in data, {i[n]} in indices")
        batch.append(merged)
    return batch


def gather_shape(
    data: ShapeLike,
    indices: ShapeLike,
    axis: int | None,
    batch_dims: int = 0,
    version: int = 8,
    indices_type: str | None = "i64",
    axis_shape: ShapeLike | None = None,
) -> PartialShape:
    """The output shape of Gather-``version``; shapes as text or PartialShape.

    >>> gather_shape("[3,4]", "[2]", axis=0, version=1)
    PartialShape('[2,4]')
    """
    _known_version(version)  # the walk asks the spec, which only exists for real versions
    return infer_gather(
        as_partial_shape(data),
        as_partial_shape(indices),
        axis,
        batch_dims,
        version,
        indices_type,
        None if axis_shape is None else as_partial_shape(axis_shape),
    )


# ---- NumPy reference ----
#
# What OpenVINO 2026.4.1's CPU plugin does with index values, found by running it
# (tests/ops/test_reference.py keeps checking it against the runtime):
#
# | op                 | index in [-s, -1]         | index outside [-s, s-1] |
# | ------------------ | ------------------------- | ----------------------- |
# | Gather-1, Gather-7 | zeros (not from the end)  | zeros                   |
# | Gather-8           | counts from the end: s+i  | zeros (as its spec says)|
#
# Except: on 1-D data of a 32/64-bit integer type the CPU plugin reads stray memory
# for out-of-range Gather-8 indices (data [4] i32, index 7 gave 1646898464); such
# cases are never compared. And on static shapes with every batch dim of size 1 and
# axis == batch_dims (>= 1), Gather-7/8 crash the process (see runtime.known_crash).
#
# The Gather-1/7 specs allow only [0, s-1], so validation feeds them no negative
# index; the reference still returns the CPU plugin's zeros. Gather-8 gets negative and
# a few out-of-range indices: both are defined.


def _ref_gather_attrs(
    data: _np.ndarray, idx: _np.ndarray, axis: int, batch_dims: int, version: int
) -> tuple[int, int]:
    """``axis`` and ``batch_dims`` made non-negative and checked as OpenVINO does."""
    _known_version(version)
    if version == 1 and batch_dims:
        raise ReferenceInputError("Gather-1 has no batch_dims")
    rank = data.ndim
    if not -rank <= axis < rank:
        raise ReferenceInputError(f"Gather axis must lie in [{-rank}, {rank - 1}], but got {axis}")
    b = batch_dims + idx.ndim if batch_dims < 0 else batch_dims
    axis %= rank
    if not 0 <= b <= min(axis, idx.ndim):
        raise ReferenceInputError(
            f"Gather needs 0 <= batch_dims <= axis and <= indices rank, but got batch_dims "
            f"{batch_dims}, axis {axis}, indices rank {idx.ndim}"
        )
    require_same_batch("Gather", data, idx, b)
    return axis, b


def gather_reference(
    data: _np.ndarray,
    indices: _np.ndarray,
    axis: int = 0,
    batch_dims: int = 0,
    version: int = 8,
) -> _np.ndarray:
    """Gather-``version`` (1, 7 or 8) as OpenVINO's CPU plugin computes it.

    Output shape ``D[:axis] + I[b:] + D[axis+1:]``; within each of the ``b`` batch
    positions the indices pick along ``axis``. Out-of-range picks are zeros.

    >>> gather_reference(_np.array([[1, 2, 3], [4, 5, 6]]), [[2, -1], [0, 9]], 1, 1)
    array([[3, 3],
           [4, 0]])
    """
    data, idx = _np.asarray(data), index_array(indices)
    axis, b = _ref_gather_attrs(data, idx, int(axis), int(batch_dims), version)
    idx = idx.astype(_np.int64, copy=False)
    shape = data.shape[:axis] + idx.shape[b:] + data.shape[axis + 1 :]
    size = data.shape[axis]
    n_batch, n_outer = prod(data.shape[:b]), prod(data.shape[b:axis])
    picks = idx.reshape(n_batch, 1, -1)
    low, high = (int(idx.min()), int(idx.max())) if idx.size else (0, 0)
    if version >= 8 and low < 0:  # Gather-8 on: negative indices count from the end
        picks = _np.where(picks < 0, picks + size, picks)
    bad = None
    if low < 0 or high >= size:
        bad = (picks < 0) | (picks >= size)
        picks = _np.where(bad, 0, picks)
    if prod(shape) == 0 or size == 0:
        return _np.zeros(shape, dtype=data.dtype)
    base = _np.arange(n_batch * n_outer, dtype=_np.int64).reshape(n_batch, n_outer, 1) * size
    rows = (base + picks).reshape(-1)
    table = data.reshape(n_batch * n_outer * size, prod(data.shape[axis + 1 :]))
    out = table.take(rows, axis=0, mode="clip").reshape(n_batch, n_outer, -1, table.shape[1])
    if bad is not None:
        out[_np.broadcast_to(bad[..., None], out.shape)] = 0
    return out.reshape(shape)


# ---- valid inputs for validate ----
#
# The axis is an input: only a constant one can be run on its own. The batch dims are
# shared by data and indices. Gather-1/7 are fed indices in [0, s-1] (their specs allow
# no more); Gather-8 also negative ones and, where its zeros are defined, about one in
# ten out of range.


def gather_8_zeros_defined(data_rank: int, dtype: _np.dtype) -> bool:
    """Whether the CPU plugin gives Gather-8's zeros for out-of-range indices.

    Not for 1-D data of a 32- or 64-bit integer type: found by running OpenVINO
    2026.4.1, it reads stray memory there (data [4] i32, index 7 gave 1646898464), as a
    shape-subgraph Gather takes another code path. Those cases are never fed.
    """
    dtype = _np.dtype(dtype)
    return not (data_rank == 1 and dtype.kind in "iu" and dtype.itemsize >= 4)


class GatherInputs(inputs.InputMaker):
    """Valid inputs for one Gather version: ``batch_dims`` whether it has that attribute,
    ``negative`` whether indices in [-s, -1] count from the end, ``zeros_outside``
    whether out-of-range indices are defined (as zeros)."""

    n_inputs = 3

    def __init__(self, batch_dims: bool, negative: bool, zeros_outside: bool) -> None:
        self.batch_dims, self.negative, self.zeros_outside = batch_dims, negative, zeros_outside

    def params(self, attrs, ins):
        axis = exact_scalar(ins[2])
        if axis is None:
            raise inputs.NoValidInputs("skipped", "the Gather axis is not a constant, so the "
                                                  "layer cannot be run on its own")
        bd = attrs.int("batch_dims", 0) if self.batch_dims else 0
        return inputs.Params(batch_dims=bd, axis=axis, axis_type=ins[2].etype)

    def sizes(self, rng, data, indices, p):
        ri = inputs.rank_or(rng, indices, max(p.batch_dims, -p.batch_dims, 0))
        b = p.batch_dims + ri if p.batch_dims < 0 else p.batch_dims
        rd = inputs.rank_or(rng, data, max(p.axis + 1, -p.axis, b + 1))
        ddims, idims = inputs.dims_or(data, rd), inputs.dims_or(indices, ri)
        batch = [inputs.pick_merged(rng, ddims[n], idims[n]) for n in range(b)]
        d = batch + [inputs.pick(rng, x) for x in ddims[b:]]
        return d, batch + [inputs.pick(rng, y) for y in idims[b:]]

    def indices(self, rng, data_shape, indices_shape, dtype, p, out_of_range=True):
        shape = tuple(indices_shape)
        size = data_shape[p.axis % len(data_shape)]
        out = inputs.uniform(rng, shape, -size if self.negative else 0, size - 1, dtype)
        if self.zeros_outside and out_of_range:
            wild = rng.random(shape) < 0.1
            far = inputs.uniform(rng, shape, size, 2 * size + 1, dtype)
            out = _np.where(wild, far, out).astype(dtype)
        return out

    def fit_const(self, data, dsize, indices, p):
        if not self.zeros_outside:  # what stays outside gives the CPU plugin's zeros
            inputs.grow_to_fit(data, dsize, [p.axis % len(dsize)], [inputs.reach(indices)])
        return dsize

    def out_of_range_defined(self, data_rank, dtype):
        return self.zeros_outside and gather_8_zeros_defined(data_rank, dtype)


def _compile_crash(shapes: list[tuple[int | None, ...] | None], consts: dict[int, int]
                   ) -> str | None:
    """Why compiling this Gather ends the process, or None: found with OpenVINO 2026.4.1,
    data with a static dim of size 0 anywhere but at ``axis`` stops the CPU plugin's
    compile with a floating point exception (SIGFPE): data [0,3,8] on axis 1, [3,0,8] on
    axis 0. The same Gather on dynamic dims compiles, and runs on such data.

    ``shapes``: the inputs' shapes as the compiled model has them (None for a dynamic
    dim or rank); ``consts``: the single values of the constant inputs, by input index.

    >>> _compile_crash([(0, 3, 8), (2,), ()], {2: 1}) is not None
    True
    >>> _compile_crash([(0, 3, 8), (2,), ()], {2: 0}), _compile_crash([(None, 3), (2,)], {})
    (None, None)
    """
    data = shapes[0] if shapes else None
    if data is None:
        return None
    axis = consts.get(2)
    if axis is not None and axis < 0:
        axis += len(data)
    if any(d == 0 and i != axis for i, d in enumerate(data)):
        return ("the CPU plugin of OpenVINO 2026.4.1 crashes (floating point exception) "
                "compiling a Gather whose data has a static dim of size 0 other than the axis")
    return None


def _known_crash(case) -> str | None:
    """Why the CPU plugin would crash on ``case`` (a runtime ``OpCase``), or None.

    Found while validating (OpenVINO 2026.4.1), both on static data shapes only (the same
    op on dynamic shapes runs correctly): Gather-7/8 with ``batch_dims >= 1`` and every
    data dim before ``axis`` of size 1 ends the process with a segmentation fault (data
    [1,5], indices [1,4], batch_dims 1, axis 1; data [1,1,4], indices [1,1,1], batch_dims
    1, axis 2), or corrupts neighbouring results in a shared model; and the compile crash
    of :func:`_compile_crash`. Not run.
    """
    rank_d, rank_i = case.data.ndim, case.indices.ndim
    b = case.batch_dims + rank_i if case.batch_dims < 0 else case.batch_dims
    axis = case.axis + rank_d if case.axis < 0 else case.axis
    static = case.data_shape is None or "?" not in case.data_shape and ".." not in case.data_shape
    if not static:
        return None
    if b >= 1 and all(d == 1 for d in case.data.shape[:axis]):
        return ("not run: the CPU plugin of OpenVINO 2026.4.1 crashes (segmentation fault) "
                "on Gather with batch_dims >= 1 and static data dims of size 1 before axis")
    crash = _compile_crash([tuple(case.data.shape)], {2: axis})
    return None if crash is None else f"not run: {crash}"


# ---- the specs -----------------------------------------------------------------------


def _rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None) -> list[Tensor]:
    bd = attrs.int("batch_dims", 0)
    axis = exact_scalar(ins[2]) if len(ins) > 2 else None
    axis_shape = ins[2].shape if len(ins) > 2 else None
    shape = infer_gather(ins[0].shape, ins[1].shape, axis, bd, attrs.version, ins[1].etype,
                         axis_shape, trace)
    return [Tensor(shape, ins[0].etype, _value(ins, axis, bd))]


def _value(ins: list[Tensor], axis: int | None, bd: int):
    """Gather of a 1-D value by exact indices along axis 0 (negative indices wrap): the
    ``ShapeOf -> Gather`` that OpenVINO evaluates, so that a Reshape fed by it keeps
    precise bounds. An exact value of any rank gathers along any axis (OpenVINO folds it),
    for the element types Gather evaluates."""
    if not numeric.evaluates("Gather", ins[0].etype) or bd != 0 or axis is None:
        return None
    if axis not in (0, -1) or ins[0].shape.dims is None or len(ins[0].shape.dims) != 1:
        return numeric.gathered(ins[0], ins[1], axis)
    data = ins[0].value
    idx = exact_ints(ins[1]) if data is not None else None
    if data is None or idx is None:
        return None
    n = len(data[0])
    if any(not -n <= i < n for i in idx):
        return None
    picks = [i % n for i in idx]
    return tuple(data[0][i] for i in picks), tuple(data[1][i] for i in picks)


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """``D[:axis] + I[b:] + D[axis+1:]`` with the batch dims of D and I equal; a 1-D value
    gathered by exact indices picks its elements."""
    from .core.symbolic import Sym
    d, i = ins[:2]
    axis = exact_scalar(facts.inputs[2]) if len(facts.inputs) > 2 else None
    if d.dims is None or i.dims is None or axis is None:
        return None
    b = attrs.int("batch_dims", 0) if attrs.version > 1 else 0
    b = b + len(i.dims) if b < 0 else b
    axis = normalize_axis(axis, len(d.dims))
    batch = [facts.equal(x, y) for x, y in zip(d.dims[:b], i.dims[:b], strict=False)]
    value = None
    idx = exact_ints(facts.inputs[1])
    if d.value is not None and len(d.dims) == 1 and idx is not None and b == 0:
        n = len(d.value)
        value = [d.value[k % n] for k in idx] if all(-n <= k < n for k in idx) else None
    return [Sym(batch + list(d.dims[b:axis]) + list(i.dims[b:]) + list(d.dims[axis + 1:]),
                value)]


def _reference(version: int):
    def reference(data, indices, *, batch_dims: int = 0, axis: int = 0):
        return gather_reference(data, indices, axis, batch_dims, version)
    return reference


def _build(opsets, data, indices, case):
    axis = opsets[1].constant(_np.array(case.axis, dtype=_np.dtype(numpy_dtype(case.axis_type))))
    if case.version == 1:
        return opsets[1].gather(data, indices, axis)
    return opsets[case.version].gather(data, indices, axis, case.batch_dims)


def _rows(attrs: Attrs, shapes: list) -> tuple[tuple[int, int], set[int]] | None:
    """Data and indices agree on the batch dims (counted from the indices' end when
    negative)."""
    b = attrs.int("batch_dims", 0) if attrs.version > 1 else 0
    if b < 0:
        if shapes[1].rank is None:
            return None
        b += shapes[1].rank
    return (0, 1), set(range(max(b, 0)))


def _index_reach(ins: list[Tensor], attrs: Attrs, indices=None) -> str | None:
    """Indices past the data axis (value bounds, or the constant ``indices`` array): the
    CPU plugin reads zeros there. An index built from the batch (``b * S + s``) into data
    a batch-1 trace sized for one row, or constant indices into a smaller data."""
    if len(ins) < 3 or ins[2].value is None:
        return None
    data, axis = ins[0].shape, ins[2].value[0]
    if ins[1].value is not None and ins[1].value[0]:
        lo, hi = min(ins[1].value[0]), max(ins[1].value[1])
    elif indices is not None and indices.size:
        lo, hi = int(indices.min()), int(indices.max())
    else:
        return None
    if data.rank is None or len(axis) != 1:
        return None
    at = axis[0] + data.rank if axis[0] < 0 else axis[0]
    if not 0 <= at < data.rank or not data.dims[at].is_static:
        return None
    return reach_message(lo, hi, data.dims[at].lo, attrs.version >= 8, f"axis {at}", data)


def _table_rows(shapes: list, attrs: Attrs, consts: dict[int, int], widest: bool = False
                ) -> dict[int, int | None]:
    """The indices (input 1) pick among the data's dim on the axis (input 2)."""
    return {1: (arrays.table_bound if widest else table_size)(shapes[0], consts.get(2))}


SPECS = specs_of({OP_TYPE: _rule}, family="gather", build=_build, known_crash=_known_crash,
                 row_dims=_rows, index_reach=_index_reach, symbolic=_symbolic,
                 table_rows=_table_rows,
                 compile_crash=_compile_crash, versions={
    1: {"words": "Gather-1 gives D[:axis] + I + D[axis+1:]", "reference": _reference(1),
        "inputs": GatherInputs(batch_dims=False, negative=False, zeros_outside=False)},
    7: {"words": "Gather-7 gives D[:axis] + I[b:] + D[axis+1:]", "reference": _reference(7),
        "inputs": GatherInputs(batch_dims=True, negative=False, zeros_outside=False)},
    8: {"words": "Gather-8 gives D[:axis] + I[b:] + D[axis+1:]", "reference": _reference(8),
        "inputs": GatherInputs(batch_dims=True, negative=True, zeros_outside=True)},
})
