"""GatherND-5 and GatherND-8, and the ONNX GatherND views: output shapes (SPEC.md §2).

``b`` is batch_dims, ``k = indices.shape[-1]``. GatherND-8 (and ONNX GatherND-12/13) keeps
the batch dims: ``I[:b] + I[b:-1] + D[b+k:]``. GatherND-5 is the same rule with the ``b``
batch dims folded into their product when ``b > 1``::

    >>> gather_nd_shape("[2,3,4]", "[2,1]", batch_dims=1, version=8)
    PartialShape('[2,4]')
    >>> gather_nd_shape("[1,64,64,320]", "[1,64,64,1,1]", batch_dims=3, version=8)
    PartialShape('[1,64,64,1]')
    >>> gather_nd_shape("[1,64,64,320]", "[1,64,64,1,1]", batch_dims=3, version=5)
    PartialShape('[4096,1]')

The checks run in OpenVINO's order (openvino-facts.md §1): the indices element type,
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

from ..errors import ShapeInferenceError, UnsupportedOpError
from ..shapes import Dimension, PartialShape, ShapeLike, as_partial_shape
from .registry import is_integral_number

__all__ = ["infer_gather_nd", "gather_nd_shape", "onnx_gather_nd_shape"]

_SIZE_T = 1 << 64
_DYNAMIC_RANK = PartialShape.of(None)


def _fail(version: int, rule: str, data, indices, batch_dims: int) -> ShapeInferenceError:
    """The error for a broken ``rule``: the rule in words, then what was seen."""
    seen = f"but got data {data}, indices {indices}, batch_dims={batch_dims}"
    return ShapeInferenceError(f"GatherND-{version}: {rule}, {seen}")


def infer_gather_nd(
    data: PartialShape,
    indices: PartialShape,
    batch_dims: int,
    version: int,
    indices_type: str | None = None,
) -> PartialShape:
    """The output shape of GatherND-``version`` (5 or 8), or ShapeInferenceError.

    ``indices_type`` is the indices element type (``"i32"``, ``"f32"``, …); None skips
    that check.

    >>> str(infer_gather_nd(PartialShape.parse("[7,?,11,12,32]"),
    ...                     PartialShape.parse("[7,5,3,1]"), 2, 5))
    '[35,3,12,32]'
    """
    if version not in (5, 8):
        raise UnsupportedOpError(f"GatherND has versions 5 and 8, not {version}")
    if indices_type is not None and not is_integral_number(indices_type):
        rule = f"the indices must be of an integer type (not {indices_type})"
        raise _fail(version, rule, data, indices, batch_dims)
    b = batch_dims if batch_dims >= 0 else batch_dims + _SIZE_T
    d, i = data.dims, indices.dims
    if d is not None:
        if not d:
            raise _fail(version, "data must have rank at least 1", data, indices, batch_dims)
        if len(d) <= b:
            rule = "batch_dims must be less than the rank of data"
            raise _fail(version, rule, data, indices, batch_dims)
    if i is not None:
        if not i:
            raise _fail(version, "indices must have rank at least 1", data, indices, batch_dims)
        if len(i) <= b:
            rule = "batch_dims must be less than the rank of indices"
            raise _fail(version, rule, data, indices, batch_dims)
    if d is None or i is None or i[-1].lo != i[-1].hi:
        return _DYNAMIC_RANK
    return _known_ranks(d, i, b, version, data, indices)


def _known_ranks(d, i, b: int, version: int, data, indices) -> PartialShape:
    """The rule once both ranks and the tuple length ``k`` are known."""
    k = i[-1].lo
    if k + b > len(d):
        rule = (
            "the index tuple length indices.shape[-1] must not exceed the rank of data "
            f"minus batch_dims ({k} > {len(d)} - {b})"
        )
        raise _fail(version, rule, data, indices, b)
    batch = d[:b]
    if batch != i[:b]:  # equal dims merge to themselves: the common case costs one compare
        batch = _merged_batch(d, i, b, version, data, indices)
    if version == 5 and b > 1:
        batch = (_product(batch),)
    return PartialShape.of((*batch, *i[b:-1], *d[b + k :]))


def _merged_batch(d, i, b: int, version: int, data, indices) -> tuple:
    """The ``b`` leading dims of data and indices, merged as intervals."""
    batch = []
    for axis in range(b):
        merged = d[axis].merge(i[axis])
        if merged is None:
            rule = (
                "the leading batch_dims dims of data and indices must match "
                f"(dim {axis}: {d[axis]} in data, {i[axis]} in indices)"
            )
            raise _fail(version, rule, data, indices, b)
        batch.append(merged)
    return tuple(batch)


def _product(dims: tuple) -> Dimension:
    """The product of dims with OpenVINO's interval arithmetic (GatherND-5's folding)."""
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


# ---- NumPy reference (issue 6) ----
#
# What OpenVINO 2026.4.1's CPU plugin does with index values, found by running it
# (tests/test_reference.py keeps checking it against the runtime):
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

import numpy as _np  # noqa: E402 (this section sits below the shape rules)


def _ref_index_array(indices: object) -> _np.ndarray:
    """Integer indices as an array, of their own integer type (no copy)."""
    idx = _np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"indices must be of an integer type, but got {idx.dtype}")
    return idx


def _ref_prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out


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
    raise IndexError(
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
    ``[prod(I[:b])] + I[b:-1] + D[b+k:]`` (SPEC.md §2). ``out``, when given, is a
    C-contiguous array of the output's shape and dtype to write into.

    >>> gather_nd_reference(_np.array([[1, 2], [3, 4]]), _np.array([[1], [0]]), 1)
    array([2, 3])
    >>> gather_nd_reference(_np.arange(8).reshape(2, 2, 2), [[[-1], [0]], [[0], [1]]], 2, 5)
    array([1, 2, 4, 7])
    """
    if version not in (5, 8):
        raise ValueError(f"GatherND has versions 5 and 8, but got {version}")
    data, idx, b = _np.asarray(data), _ref_index_array(indices), int(batch_dims)
    if data.ndim < 1 or idx.ndim < 1 or not 0 <= b < min(data.ndim, idx.ndim):
        raise ValueError(
            "GatherND needs ranks >= 1 and 0 <= batch_dims < min(ranks), but got data "
            f"rank {data.ndim}, indices rank {idx.ndim}, batch_dims {b}"
        )
    k = idx.shape[-1]
    if k > data.ndim - b:
        raise ValueError(
            f"GatherND index tuples of length {k} exceed the {data.ndim - b} non-batch "
            f"dims of data {data.shape}"
        )
    if data.shape[:b] != idx.shape[:b]:
        raise ValueError(
            f"GatherND batch dims of data and indices must be equal, but got "
            f"{data.shape[:b]} and {idx.shape[:b]}"
        )
    lead = idx.shape[:-1]
    if version == 5 and b > 0:
        lead = (_ref_prod(lead[:b]),) + lead[b:]
    shape = lead + data.shape[b + k :]
    if out is None:
        out = _np.empty(shape, dtype=data.dtype)
    elif out.shape != shape or out.dtype != data.dtype or not out.flags.c_contiguous:
        raise ValueError(
            f"GatherND out must be a C-contiguous {data.dtype} array of shape {shape}, "
            f"but got {'a' if out.flags.c_contiguous else 'a non-contiguous'} {out.dtype} "
            f"array of shape {out.shape}"
        )
    n_batch, n_tuples = _ref_prod(data.shape[:b]), _ref_prod(idx.shape[b:-1])
    if n_batch * n_tuples == 0:
        return out
    tuples = idx.reshape(n_batch, n_tuples, k)
    rows = _ref_rows(tuples, b > 0, data.shape[b : b + k])
    if out.size:
        table = data.reshape(_ref_prod(data.shape[: b + k]), -1)
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
            raise ValueError(f"GatherND-{opset} ({domain or 'ai.onnx'}) has no batch_dims")
    elif domain or opset not in (12, 13):
        raise ValueError(f"ONNX GatherND has opsets 11, 12 and 13, but got {domain} {opset}")
    return gather_nd_reference(data, indices, batch_dims, 8)
