"""GatherND-5 and GatherND-8, and the ONNX GatherND views: output shapes.

``b`` is batch_dims, ``k = indices.shape[-1]``. GatherND-8 (and ONNX GatherND-12/13) keeps
the batch dims: ``I[:b] + I[b:-1] + D[b+k:]``. GatherND-5 is the same rule with the ``b``
batch dims folded into their product when ``b > 1``::

    >>> gather_nd_shape("[2,3,4]", "[2,1]", batch_dims=1, version=8)
    PartialShape('[2,4]')
    >>> gather_nd_shape("[1,64,64,320]", "[1,64,64,1,1]", batch_dims=3, version=8)
    PartialShape('[1,64,64,1]')
    >>> gather_nd_shape("[1,64,64,320]", "[1,64,64,1,1]", batch_dims=3, version=5)
    PartialShape('[4096,1]')

The checks run in OpenVINO's order (checked on 2026.4.1): the indices element type,
the data rank, the indices rank, and only when both ranks and ``k`` are known, the tuple
length and then the batch dims (merged as intervals). When a rank or ``k`` is unknown
the output is of dynamic rank, and no later rule is checked::

    >>> gather_nd_shape("[2..6,3..7,8..10,12..14]", "[4..8,6..10,1]", batch_dims=2, version=5)
    PartialShape('[24..42,12..14]')
    >>> gather_nd_shape("[8,3,11,12]", "[8,4,?]", batch_dims=1)
    PartialShape('[...]')
    >>> gather_nd_shape("[2,2]", "[2,0]")       # k = 0 gathers whole slices
    PartialShape('[2,2,2]')
    >>> try:
    ...     gather_nd_shape("[2,3,4,5]", "[2,1,2]", batch_dims=2)
    ... except ShapeInferenceError as err:
    ...     print(err)  # doctest: +NORMALIZE_WHITESPACE
    GatherND-8: the leading batch_dims dims of data and indices must match (dim 1: 3 in data, 1 in
    indices), but got data [2,3,4,5], indices [2,1,2], batch_dims=2

``batch_dims`` is unsigned in OpenVINO: a negative value breaks the rank rules, except when
both ranks are unknown (then the output is ``[...]``, as OpenVINO answers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import numpy as _np
from ..element_types import is_integral_number
from ..errors import IndexRangeError, ReferenceInputError, ShapeInferenceError, UnsupportedOpError
from ..shapes import DYNAMIC_RANK, Dimension, PartialShape, ShapeLike, as_partial_shape
from .core import arrays, inputs
from .core.arrays import index_array, prod, reach_message, require_same_batch, table_size
from .core.spec import Attrs, Checks, Trace, specs_of
from .core.values import Tensor

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["infer_gather_nd", "gather_nd_shape", "onnx_gather_nd_shape", "fold_batch_dims",
           "OP_TYPE"]

#: The op type this file serves (what a layer's ``type`` says).
OP_TYPE = "GatherND"

_SIZE_T = 1 << 64

def infer_gather_nd(
    data: PartialShape,
    indices: PartialShape,
    batch_dims: int,
    version: int,
    indices_type: str | None = None,
    trace: Trace | None = None,
) -> PartialShape:
    """The output shape of GatherND-``version`` (5 or 8), or ShapeInferenceError.

    ``indices_type`` is the indices element type (``"i32"``, ``"f32"``, …); None skips
    that check. ``trace`` records every check and what the rule worked out (``k``, the
    merged ``batch`` dims, GatherND-5's ``fold``) for ``explain``.

    >>> str(infer_gather_nd(PartialShape.parse("[7,?,11,12,32]"),
    ...                     PartialShape.parse("[7,5,3,1]"), 2, 5))
    '[35,3,12,32]'
    """
    if version not in (5, 8):
        raise UnsupportedOpError(f"GatherND has versions 5 and 8, not {version}")
    check = Checks(trace, lambda: f"GatherND-{version}",
                   lambda: f"but got data {data}, indices {indices}, batch_dims={batch_dims}")
    check.fact("batch_dims", batch_dims)
    if indices_type is not None:
        check.require(is_integral_number(indices_type), "the indices must be of an integer type",
                      lambda: f"indices are {indices_type}")
    b = batch_dims if batch_dims >= 0 else batch_dims + _SIZE_T
    d, i = data.dims, indices.dims
    for what, dims in (("data", d), ("indices", i)):
        if dims is None:
            check.note(f"{what} must have rank at least 1 and more than batch_dims",
                       f"the rank of {what} is unknown: nothing to check")
            continue
        check.require(len(dims) > 0, lambda what=what: f"{what} must have rank at least 1",
                      lambda dims=dims: f"rank {len(dims)}")
        check.require(len(dims) > b,
                      lambda what=what: f"batch_dims must be less than the rank of {what}",
                      lambda dims=dims: f"batch_dims {batch_dims}, rank {len(dims)}")
    if d is None or i is None or i[-1].lo != i[-1].hi:
        check.fact("k", None if i is None else str(i[-1]))
        check.note("k and both ranks must be known to build the output", lambda: (
            "the rank of data or indices is unknown" if d is None or i is None
            else f"k = I[-1] = {i[-1]} is not static") + ", so the output is of dynamic rank "
            "and nothing more is checked")
        return DYNAMIC_RANK
    k = i[-1].lo
    check.fact("k", str(k))
    check.require(k + b <= len(d), "batch_dims + the index tuple length k must not exceed "
                  "the rank of data", lambda: f"{b} + {k} > {len(d)}" if k + b > len(d)
                  else f"{b} + {k} <= {len(d)}")
    batch = d[:b]
    if batch != i[:b] or trace is not None:  # equal dims merge to themselves
        batch = _merged_batch(d, i, b, check)
    kept = batch
    if version == 5 and b > 1:
        batch = (fold_batch_dims(batch),)
    out = PartialShape.of((*batch, *i[b:-1], *d[b + k :]))
    if trace is not None:
        trace.facts["note"] = (
            f"batch dims folded into one: {' x '.join(map(str, kept))} = {batch[0]} -> {out}"
            if version == 5 and b > 1 else f"batch dims kept: {PartialShape.of(kept)} + I[b:-1] = "
            f"{PartialShape.of(i[b:-1])} + D[b+k:] = {PartialShape.of(d[b + k:])} -> {out}"
            if version == 8
            else f"b = {b} <= 1: nothing to fold, the same as GatherND-8")
    return out


def _merged_batch(d, i, b: int, check: Checks) -> tuple:
    """The ``b`` leading dims of data and indices, merged as intervals."""
    merged = [d[axis].merge(i[axis]) for axis in range(b)]
    rows = [{"axis": str(axis), "data": str(d[axis]), "indices": str(i[axis]),
             "merged": None if m is None else str(m)} for axis, m in enumerate(merged)]
    check.fact("batch", rows)
    bad = next((r for r in rows if r["merged"] is None), None)
    check.require(bad is None, "the leading batch_dims dims of data and indices must match",
                  lambda: f"dim {bad['axis']}: {bad['data']} in data, {bad['indices']} in "
                  "indices" if bad else "; ".join(
                      f"dim {r['axis']}: {r['data']} & {r['indices']} -> {r['merged']}"
                      for r in rows) or "batch_dims = 0: no batch dims")
    return tuple(merged)


def fold_batch_dims(dims: tuple[Dimension, ...]) -> Dimension:
    """GatherND-5's one batch dim: the product of the kept ones, with OpenVINO's interval
    arithmetic.

    >>> str(fold_batch_dims(PartialShape.parse("[2..3,4]").dims))
    '8..12'
    """
    folded = dims[0]
    for dim in dims[1:]:
        folded = folded * dim
    return folded


def gather_nd_shape(
    data: ShapeLike,
    indices: ShapeLike,
    batch_dims: int = 0,
    version: int = 8,
    indices_type: str | None = "i64",
) -> PartialShape:
    """The output shape of GatherND-``version``; shapes as text or PartialShape.

    >>> gather_nd_shape("[2,2]", "[2,2]"), gather_nd_shape("[2,2]", "[2,1]")
    (PartialShape('[2]'), PartialShape('[2,2]'))
    """
    return infer_gather_nd(
        as_partial_shape(data), as_partial_shape(indices), batch_dims, version, indices_type
    )


#: ONNX GatherND versions by domain: the since_versions and whether they take batch_dims.
_ONNX_VERSIONS = {"": ((11, False), (12, True), (13, True)), "com.microsoft": ((1, False),)}


def onnx_gather_nd_shape(
    data: ShapeLike,
    indices: ShapeLike,
    batch_dims: int | None = None,
    opset: int = 13,
    domain: str = "",
    indices_type: str | None = "i64",
) -> PartialShape:
    """The output shape of ONNX GatherND-11/12/13 or com.microsoft GatherND-1.

    OpenVINO's ONNX frontend turns all of them into GatherND-8, so this is the v8 rule;
    ``opset`` is the model's opset import for ``domain``. GatherND-11 and com.microsoft
    GatherND-1 have no ``batch_dims`` attribute, so passing one (even 0) is an error.

    One difference, on purpose: the ONNX spec wants equal batch dims, and so does this
    rule, but OpenVINO's ONNX frontend copies onnxruntime and broadcasts a batch dim of 1
    (2026.4.1 imports data ``[1,3,4]``, indices ``[5,1]``, batch_dims=1 as ``[5,4]``;
    here that is an error).

    >>> onnx_gather_nd_shape("[2,2,2]", "[2,1]", batch_dims=1, opset=12)
    PartialShape('[2,2]')
    >>> onnx_gather_nd_shape("[2,2,2]", "[2,1,2]", domain="com.microsoft", opset=1)
    PartialShape('[2,1,2]')
    """
    takes_batch_dims = _onnx_version(opset, domain)
    if batch_dims is not None and not takes_batch_dims:
        name = "com.microsoft GatherND-1" if domain else "ONNX GatherND-11"
        raise UnsupportedOpError(
            f"{name} has no batch_dims attribute (it came with GatherND-12), "
            f"but got batch_dims={batch_dims}"
        )
    return gather_nd_shape(data, indices, batch_dims or 0, 8, indices_type)


def _onnx_version(opset: int, domain: str) -> bool:
    """Whether the GatherND that ``opset`` of ``domain`` selects takes batch_dims."""
    versions = _ONNX_VERSIONS.get(domain)
    if versions is None:
        raise UnsupportedOpError(f"no GatherND in the ONNX domain '{domain}'")
    if opset < versions[0][0]:
        raise UnsupportedOpError(
            f"opset {opset} of the ONNX domain '{domain}' has no GatherND "
            f"(it came in opset {versions[0][0]})"
        )
    takes = versions[0][1]
    for since, has_batch_dims in versions:
        if opset >= since:
            takes = has_batch_dims
    return takes


# ---- NumPy reference ----
#
# What OpenVINO 2026.4.1's CPU plugin does with index values, found by running it
# (tests/ops/test_reference.py keeps checking it against the runtime):
#
# | op                          | index in [-s, -1]        | index outside [-s, s-1]       |
# | --------------------------- | ------------------------ | ----------------------------- |
# | GatherND-5, GatherND-8      | counts from the end: s+i | undefined: reads stray memory |
# | ONNX GatherND-11/12/13,     | counts from the end      | "an error" (ONNX spec)        |
# | com.microsoft GatherND-1    |                          |                               |
#
# OpenVINO's GatherND spec allows only [0, s-1]; the CPU plugin wraps negatives as ONNX
# does, so the reference does too. Index tuples of length 0 (``indices.shape[-1] == 0``,
# accepted by OpenVINO's shape rule) give garbage on the CPU plugin: undefined, never
# compared; the reference returns the whole slices the formula describes. Outside
# [-s, s-1] the reference raises IndexError: the runtime returns garbage there, so such
# a case is never compared.
#
# Speed: each index tuple, with its batch number in front, becomes the row number of a
# 2-D table of data slices in one pass that also checks the range
# (``numpy.ravel_multi_index``); ``take`` then copies whole rows into the output. No
# index is cast or copied on the way. Negative indices cost three more elementwise
# passes per column (``i + s`` where ``i < 0``, branch-free), then the same call;
# ``ravel_multi_index(mode="wrap")`` would divide and take longer. ``out`` lets a
# caller reuse its output (tools/bench_validate.py).


def _ref_rows(tuples: _np.ndarray, batched: bool, sizes: tuple[int, ...]) -> _np.ndarray:
    """Row numbers of the index tuples ``tuples`` (shape ``(n_batch, m, k)``) in a table of
    the data's slices, the batches one after the other; shape ``(n_batch, m)``.

    Negative indices count from the end. Raises IndexError outside [-s, s-1].
    """
    n_batch, m, k = tuples.shape
    if k == 0:  # whole slices: the row of a tuple is its batch number
        return _np.broadcast_to(_np.arange(n_batch)[:, None], (n_batch, m))
    batch = ((_np.arange(n_batch)[:, None],), (n_batch,)) if batched else ((), ())
    try:  # raises unless every index is in [0, s-1]
        return _np.ravel_multi_index(batch[0] + tuple(tuples.transpose(2, 0, 1)),
                                     batch[1] + sizes)
    except ValueError:
        pass
    if tuples.dtype.kind == "i":  # i + s where i < 0: [-s, -1] -> [0, s-1], the rest kept
        bits = 8 * tuples.dtype.itemsize - 1
        wrapped = _np.empty((k, n_batch, m), dtype=_np.intp)
        for column, size, index in zip(wrapped, sizes, tuples.transpose(2, 0, 1), strict=True):
            _np.right_shift(index, bits, out=column)  # -1 where i < 0, else 0
            column &= size
            column += index
        try:
            return _np.ravel_multi_index(batch[0] + tuple(wrapped), batch[1] + sizes)
        except ValueError:
            pass
    raise IndexRangeError(
        f"GatherND indices must lie in [-s, s-1] for the indexed data dims {sizes}, "
        f"but they span [{int(tuples.min())}, {int(tuples.max())}]"
    )


def gather_nd_reference(
    data: _np.ndarray,
    indices: _np.ndarray,
    batch_dims: int = 0,
    version: int = 8,
    out: _np.ndarray | None = None,
) -> _np.ndarray:
    """GatherND-``version`` (5 or 8) as OpenVINO's CPU plugin computes it.

    v8 keeps the batch dims, ``I[:b] + I[b:-1] + D[b+k:]``; v5 folds them into one,
    ``[prod(I[:b])] + I[b:-1] + D[b+k:]``. ``out``, when given, is a
    C-contiguous array of the output's shape and dtype to write into.

    >>> gather_nd_reference(_np.array([[1, 2], [3, 4]]), _np.array([[1], [0]]), 1)
    array([2, 3])
    >>> gather_nd_reference(_np.arange(8).reshape(2, 2, 2), [[[-1], [0]], [[0], [1]]], 2, 5)
    array([1, 2, 4, 7])
    """
    if version not in (5, 8):
        raise ReferenceInputError(f"GatherND has versions 5 and 8, but got {version}")
    data, idx, b = _np.asarray(data), index_array(indices), int(batch_dims)
    if data.ndim < 1 or idx.ndim < 1 or not 0 <= b < min(data.ndim, idx.ndim):
        raise ReferenceInputError(
            "GatherND needs ranks >= 1 and 0 <= batch_dims < min(ranks), but got data "
            f"rank {data.ndim}, indices rank {idx.ndim}, batch_dims {b}"
        )
    k = idx.shape[-1]
    if k > data.ndim - b:
        raise ReferenceInputError(
            f"GatherND index tuples of length {k} exceed the {data.ndim - b} non-batch "
            f"dims of data {data.shape}"
        )
    require_same_batch("GatherND", data, idx, b)
    lead = idx.shape[:-1]
    if version == 5 and b > 0:
        lead = (prod(lead[:b]),) + lead[b:]
    shape = lead + data.shape[b + k :]
    if out is None:
        out = _np.empty(shape, dtype=data.dtype)
    elif out.shape != shape or out.dtype != data.dtype or not out.flags.c_contiguous:
        raise ReferenceInputError(
            f"GatherND out must be a C-contiguous {data.dtype} array of shape {shape}, "
            f"but got {'a' if out.flags.c_contiguous else 'a non-contiguous'} {out.dtype} "
            f"array of shape {out.shape}"
        )
    n_batch, n_tuples = prod(data.shape[:b]), prod(idx.shape[b:-1])
    if n_batch * n_tuples == 0:
        return out
    tuples = idx.reshape(n_batch, n_tuples, k)
    rows = _ref_rows(tuples, b > 0, data.shape[b : b + k])
    if out.size:
        table = data.reshape(prod(data.shape[: b + k]), -1)
        table.take(rows.reshape(-1), axis=0, out=out.reshape(rows.size, -1), mode="wrap")
    return out


def onnx_gather_nd_reference(
    data: _np.ndarray,
    indices: _np.ndarray,
    batch_dims: int = 0,
    opset: int = 13,
    domain: str = "",
) -> _np.ndarray:
    """ONNX GatherND-11/12/13 or com.microsoft GatherND-1: GatherND-8's arithmetic.

    ONNX allows indices in [-s, s-1] like the CPU plugin. GatherND-11 and
    com.microsoft GatherND-1 have no ``batch_dims`` (it must stay 0).
    """
    if domain == "com.microsoft" or opset == 11:
        if batch_dims:
            raise ReferenceInputError(f"GatherND-{opset} ({domain or 'ai.onnx'}) has no batch_dims")
    elif domain or opset not in (12, 13):
        raise ReferenceInputError(
            f"ONNX GatherND has opsets 11, 12 and 13, but got {domain} {opset}")
    return gather_nd_reference(data, indices, batch_dims, 8)


# ---- valid inputs for validate ----
#
# The batch dims are shared by data and indices; an index tuple is no longer than the
# data dims after them; every index lies in [-s, s-1] (the CPU plugin counts negative
# ones from the end, and reads stray memory outside). Index tuples of length 0 are never
# run: the CPU plugin returns garbage for them.


class GatherNDInputs(inputs.InputMaker):
    """Valid inputs for GatherND-5 and -8 (the same for both)."""

    def params(self, attrs, ins):
        i = ins[1].shape
        if i.rank is not None and i.dims[-1] == 0:
            raise inputs.NoValidInputs("skipped", "index tuples of length 0: the CPU plugin "
                                                  "returns undefined values for them")
        return inputs.Params(batch_dims=attrs.int("batch_dims", 0))

    def sizes(self, rng, data, indices, p):
        b = p.batch_dims
        idims = inputs.dims_or(indices, inputs.rank_or(rng, indices, b + 1))
        if data.rank is None:
            k = inputs.pick(rng, idims[-1], 1, 3)
            rd = b + k + int(rng.integers(0, 2))
        else:
            rd = data.rank
            k = inputs.pick(rng, idims[-1], 1, rd - b)
        ddims = inputs.dims_or(data, rd)
        batch = [inputs.pick_merged(rng, ddims[n], idims[n]) for n in range(b)]
        d = batch + [inputs.pick(rng, x) for x in ddims[b:]]
        return d, batch + [inputs.pick(rng, x) for x in idims[b:-1]] + [k]

    def indices(self, rng, data_shape, indices_shape, dtype, p, out_of_range=True):
        shape = tuple(indices_shape)
        sizes = data_shape[p.batch_dims : p.batch_dims + shape[-1]]
        columns = [inputs.uniform(rng, shape[:-1], -s, s - 1, dtype) for s in sizes]
        return _np.stack(columns, axis=-1) if columns else _np.zeros(shape, dtype)

    def fit_const(self, data, dsize, indices, p):
        k = indices.shape[-1]
        need = [inputs.reach(column) for column in indices.reshape(-1, k).T]
        short = inputs.grow_to_fit(data, dsize, range(p.batch_dims, p.batch_dims + k), need)
        if short is not None:
            raise inputs.const_out_of_range(OP_TYPE, dsize, short, "reads stray memory")
        return dsize


# ---- the specs -----------------------------------------------------------------------


def _rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None) -> list[Tensor]:
    bd = attrs.int("batch_dims", 0)
    if bd < 0:
        raise ShapeInferenceError(
            f"GatherND's batch_dims must be 0 or more (OpenVINO keeps it unsigned, so a "
            f"negative value reads as a huge count), but got batch_dims={bd}")
    shape = infer_gather_nd(ins[0].shape, ins[1].shape, bd, attrs.version, ins[1].etype, trace)
    return [Tensor(shape, ins[0].etype)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """``I[:b] + I[b:-1] + D[b+k:]`` with the batch dims of D and I equal (GatherND-5
    folds them into their product when b > 1)."""
    from .core.symbolic import Sym, dims_product
    d, i = ins[0].dims, ins[1].dims
    k = facts.inputs[1].shape.dims[-1] if i else None
    if d is None or not i or k is None or k.lo != k.hi:
        return None
    b = attrs.int("batch_dims", 0)
    batch = [facts.equal(x, y) for x, y in zip(d[:b], i[:b], strict=True)]
    if attrs.version == 5 and b > 1:
        batch = [dims_product(batch)]
    return [Sym([*batch, *i[b:-1], *d[b + k.lo:]])]


def _onnx_views(outputs: dict, facts: dict, attrs: Attrs) -> dict:
    """What ONNX GatherND-12/13 and GatherND-11 give: GatherND-8's layout (OpenVINO imports
    them as GatherND-8), but ONNX wants k >= 1 and GatherND-11 has no batch_dims."""
    kept = outputs.get("GatherND-8")
    if kept is None:
        return {}
    if facts.get("k") == "0":
        onnx = (None, "ONNX needs k >= 1 (OpenVINO accepts k = 0: whole slices)")
    else:
        onnx = (kept, "the same layout as GatherND-8; OpenVINO imports it as GatherND-8")
    if attrs.int("batch_dims", 0) == 0:
        onnx11 = (onnx[0], "b = 0: the same as GatherND-12/13")
    else:
        onnx11 = (None, "GatherND-11 and com.microsoft GatherND have no batch_dims: b must be 0")
    return {"ONNX GatherND-12/13": onnx, "ONNX GatherND-11": onnx11}


def _reference(version: int):
    def reference(data, indices, *, batch_dims: int = 0, axis: int = 0):
        return gather_nd_reference(data, indices, batch_dims, version)
    return reference


def _build(opsets, data, indices, case):
    return opsets[case.version].gather_nd(data, indices, case.batch_dims)


def _rows(attrs: Attrs, shapes: list) -> tuple[tuple[int, int], set[int]] | None:
    """Data and indices agree on the batch dims."""
    return (0, 1), set(range(max(attrs.int("batch_dims", 0), 0)))


def _index_reach(ins: list[Tensor], attrs: Attrs, indices=None) -> str | None:
    """Constant indices whose column ``c`` reaches past data dim ``batch_dims + c``
    (negative ones count from the end): the CPU plugin reads out of bounds there."""
    data, bd = ins[0].shape, attrs.int("batch_dims", 0)
    if indices is None or not indices.size or indices.ndim < 1 or data.rank is None:
        return None
    columns = indices.reshape(-1, indices.shape[-1])
    for c in range(columns.shape[1]):
        at = bd + c
        if at >= data.rank or not data.dims[at].is_static:
            continue
        why = reach_message(int(columns[:, c].min()), int(columns[:, c].max()),
                            data.dims[at].lo, True, f"dim {at} (index column {c})", data)
        if why:
            return why
    return None


def _table_rows(shapes: list, attrs: Attrs, consts: dict[int, int], widest: bool = False
                ) -> dict[int, int | None]:
    """Column ``c`` of the indices (input 1) picks along data dim ``batch_dims + c``: the
    smallest of those dims bounds every column (``widest``: the largest, which no valid
    index passes, or None when one of them is unknown)."""
    data, indices = shapes[0], shapes[1]
    if data is None or not indices or indices[-1] is None:
        return {1: None if widest else 1}
    axes = range(attrs.int("batch_dims", 0), attrs.int("batch_dims", 0) + indices[-1])
    if widest:
        sizes = [arrays.table_bound(data, a) for a in axes]
        return {1: None if not sizes or None in sizes else max(sizes)}
    return {1: min((table_size(data, a) for a in axes), default=1)}


SPECS = specs_of({OP_TYPE: _rule}, family="gather", build=_build, views=_onnx_views,
                 row_dims=_rows, index_reach=_index_reach, symbolic=_symbolic,
                 table_rows=_table_rows,
                 inputs=GatherNDInputs(), versions={
    5: {"words": "GatherND-5 folds the batch dims into one: [prod(I[:b])] + I[b:-1] + D[b+k:] "
                 "when b > 1", "reference": _reference(5)},
    8: {"words": "GatherND-8 keeps the batch dims: I[:b] + I[b:-1] + D[b+k:]",
        "reference": _reference(8)},
})
