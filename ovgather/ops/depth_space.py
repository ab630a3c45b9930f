"""Moving data between depth, space and batch: DepthToSpace-1, SpaceToDepth-1,
BatchToSpace-2, SpaceToBatch-2, and ShuffleChannels-1, which moves channels among their
groups and keeps the shape (its axis a dim of a rank 1 or more input, ``group`` at least
1 and dividing a static channel dim).

BatchToSpace gives ``[N / prod(block), D1 * b1 - crops1, ...]`` and SpaceToBatch
``[N * prod(block), (D1 + pads1) / b1, ...]`` (block, crops and pads: 1-D inputs of one
shape; BatchToSpace wants one element per data dim, a block of 1 or more and crops of 0 or
more; SpaceToBatch only a positive block on the spatial dims, once all three are known).
Only exact block values count (others are taken as "1 or more" by BatchToSpace, as
unknown by SpaceToBatch); crops and pads must be exact too. SpaceToBatch adds each pad as
a dimension (a pad of -1 is ``?``, as in ``core/dims.py``).

With ``k`` spatial dims and block size ``b``, DepthToSpace turns ``[N, C, D1..Dk]`` into
``[N, C / b^k, D1*b, .., Dk*b]`` and SpaceToDepth does the reverse,
``[N, C * b^k, D1/b, .., Dk/b]``. A division is OpenVINO's ``Dimension / b`` (see
``core/dims.py``): a static dim must be a multiple of ``b``, an interval keeps the
multiples it holds, ``?`` stays ``?``.

>>> from ovgather.shapes import PartialShape as P
>>> str(depth_space_shape(P.parse("[1,3..9,2,?]"), 2, to_space=True))
'[1,1..2,4,?]'
>>> str(depth_space_shape(P.parse("[1,3,4,1..5]"), 2, to_space=False))
'[1,12,2,1..2]'
"""

from __future__ import annotations

import math

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .core.dims import divided
from .core.dims import padded as pad_dim
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, exact_ints

__all__ = ["depth_space_shape", "SPECS"]

MODES = ("blocks_first", "depth_first")


def _divide(d: Dimension, k: int) -> Dimension:
    out = divided(d, k)
    if out is None:
        raise ShapeInferenceError(f"the dim {d} must hold a multiple of {k}, but holds none")
    return out


def depth_space_shape(data: PartialShape, block: int, to_space: bool) -> PartialShape:
    """DepthToSpace (``to_space``) or SpaceToDepth of ``data`` with block size ``block``."""
    dims = data.dims
    if dims is None:
        return data
    if len(dims) < 3:
        raise ShapeInferenceError(f"the data must have rank 3 or more, but got {data}")
    if block <= 0:
        raise ShapeInferenceError(f"the block size must be positive, but got {block}")
    factor = block ** (len(dims) - 2)
    if to_space:
        return PartialShape.of((dims[0], _divide(dims[1], factor))
                               + tuple(d * block for d in dims[2:]))
    return PartialShape.of((dims[0], dims[1] * factor)
                           + tuple(_divide(d, block) for d in dims[2:]))


def _rule(to_space: bool):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        mode = attrs.text("mode", "blocks_first").lower()
        if mode not in MODES:
            raise ShapeInferenceError(f"mode must be blocks_first or depth_first, but got '{mode}'")
        shape = depth_space_shape(ins[0].shape, attrs.int("block_size", 1), to_space)
        return [Tensor(shape, ins[0].etype)]

    return rule


def _ints_inputs(ins: list[Tensor], rank: int | None, names: str, counted: bool = True):
    """The exact values of the three 1-D inputs (None each when not exact), after
    OpenVINO's checks on their shapes."""
    merged = ins[1].shape
    for t in ins[2:4]:
        merged = merged.merge(t.shape) if merged is not None else None
    if merged is None or (merged.dims is not None and len(merged.dims) != 1):
        raise ShapeInferenceError(f"{names} must be 1-D inputs of one shape, but got "
                                  f"{', '.join(str(t.shape) for t in ins[1:4])}")
    if counted and rank is not None and merged.is_static and merged.dims[0].lo != rank:
        raise ShapeInferenceError(
            f"{names} must have one element per data dim ({rank}), but got {merged}")
    return [exact_ints(t) for t in ins[1:4]]


def _check_values(block, begin, end, names: str | None) -> bool:
    """True when all three are exact, after the checks OpenVINO makes on the exact ones
    (the block 1 or more; the crops, when ``names`` says so, not negative)."""
    if block is not None and any(b < 1 for b in block):
        raise ShapeInferenceError(f"the block shape must be 1 or more, but got {list(block)}")
    if begin is None or end is None:
        return False
    for v in (begin, end):
        if names is not None and any(x < 0 for x in v):
            raise ShapeInferenceError(f"the {names} must not be negative, but got {list(v)}")
    return block is not None


def _batch_to_space(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    dims = ins[0].shape.dims
    if dims is not None and len(dims) < 2:
        raise ShapeInferenceError(f"the data must have rank 2 or more, but got {ins[0].shape}")
    block, begin, end = _ints_inputs(ins, None if dims is None else len(dims),
                                     "block_shape, crops_begin and crops_end")
    if dims is None:
        return [Tensor(ins[0].shape, ins[0].etype)]
    exact = _check_values(block, begin, end, "crops")
    batch = DYNAMIC if block is None else _divide(dims[0], math.prod(block))
    out = [batch]
    for i, d in enumerate(dims[1:], 1):
        d = d * (block[i] if block is not None else Dimension.from_bounds(1, INF))
        if begin is None or end is None:
            out.append(DYNAMIC)
            continue
        crop = begin[i] + end[i]
        if exact and d.is_static and crop > d.lo:
            raise ShapeInferenceError(
                f"the crops must fit the block times the dim, but at axis {i} they are {crop} "
                f"and {d}")
        out.append(d - crop)
    return [Tensor(PartialShape.of(tuple(out)), ins[0].etype)]


def _space_to_batch(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    dims = ins[0].shape.dims
    if dims is not None and len(dims) < 2:
        raise ShapeInferenceError(f"the data must have rank 2 or more, but got {ins[0].shape}")
    block, begin, end = _ints_inputs(ins, None if dims is None else len(dims),
                                     "block_shape, pads_begin and pads_end", counted=False)
    if dims is None:
        return [Tensor(ins[0].shape, ins[0].etype)]
    if block is None or len(block) < len(dims):
        return [Tensor(PartialShape.dynamic(len(dims)), ins[0].etype)]
    if begin is not None and end is not None and 0 in block[1:len(dims)]:
        raise ShapeInferenceError(
            f"the block shape must be positive on the spatial dims, but got {list(block)}")
    out = [dims[0] * math.prod(block)]
    for i, d in enumerate(dims[1:], 1):
        if begin is None or end is None or block[i] == 0 or min(len(begin), len(end)) <= i:
            out.append(DYNAMIC)
            continue
        padded = pad_dim(pad_dim(d, begin[i]), end[i])
        lo, hi = -(-padded.lo // block[i]), padded.hi if padded.hi == INF else \
            padded.hi // block[i]
        if lo > hi:
            raise ShapeInferenceError(
                f"the padded dim must be a multiple of the block, but at axis {i} they are "
                f"{padded} and {block[i]}")
        out.append(Dimension.from_bounds(lo, hi))
    return [Tensor(PartialShape.of(tuple(out)), ins[0].etype)]


def _shuffle_channels(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    dims, axis, group = ins[0].shape.dims, attrs.int("axis", 1), attrs.int("group", 1)
    if dims is not None:
        if not dims:
            raise ShapeInferenceError("ShuffleChannels needs rank 1 or more, but got []")
        if not -len(dims) <= axis < len(dims):
            raise ShapeInferenceError(
                f"the axis must lie in [{-len(dims)}, {len(dims) - 1}], but got {axis}")
    if group < 1:
        raise ShapeInferenceError(f"group must be 1 or more, but got {group}")
    if dims is not None and dims[axis].is_static and dims[axis].lo % group:
        raise ShapeInferenceError(
            f"the channel dim must be a multiple of group, but got {dims[axis]} and {group}")
    return [Tensor(ins[0].shape, ins[0].etype)]


SPECS = specs_of({"DepthToSpace": _rule(True), "SpaceToDepth": _rule(False),
                  "ShuffleChannels": _shuffle_channels, "BatchToSpace": _batch_to_space,
                  "SpaceToBatch": _space_to_batch})
