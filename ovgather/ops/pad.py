"""Pad-1 and Pad-12: grow (or, with negative pads, shrink) each dim by its two pads.

``pads_begin`` and ``pads_end`` are 1-D integer tensors, one element per data dim; the
pad value (``constant`` mode, optional fourth input) is a scalar. The pads may be
computed at run time: their value bounds (``values.Tensor``) bound the output, as in
OpenVINO, where each output dim is the data dim plus the sum of its two pads, lower
bound with lower bounds and upper with upper. OpenVINO's ``padded`` is kept as it is: a
lower end below 0 becomes 0 and an upper end below 0 becomes unbounded (so
``[2..5] - 6`` is ``?``); a pad from 0 up without bound leaves the dim unbounded; other
pad bounds add up in int64, so two unbounded pads overflow (``[8]`` padded by ``1..``
twice is ``?``). Pads whose bounds are unknown leave the dims ``?``.

>>> from ovgather.shapes import PartialShape as P
>>> str(pad_shape(P.parse("[2..5,?,3]"), ((1, 1), (1, 1), (-1, -1)), ((1, 1), (0, 2), (0, 0))))
'[4..7,1..,2]'

The ``edge``, ``reflect`` and ``symmetric`` modes copy data, so a static dim must hold its
pads: at least 1 element for ``edge`` when a pad is positive; more than each pad for
``reflect`` and at least each pad for ``symmetric``, whatever the pads (OpenVINO checks
the pads' lower bounds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import numpy as np
from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import (
    MAX_VALUE_SIZE,
    UNBOUNDED,
    Tensor,
    Value,
    bound_arrays,
    static_size,
    value_of_arrays,
)

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["pad_shape", "SPECS"]

MODES = ("constant", "edge", "reflect", "symmetric")
Bounds = tuple[tuple[int, int], ...]


def _wrap(x: int) -> int:
    """``x`` as an int64 sum gives it (OpenVINO adds pad bounds in int64)."""
    return ((x + (1 << 63)) % (1 << 64)) - (1 << 63)


def _padded(size: int, pad: int) -> int:
    """One end of ``dim + pads`` as OpenVINO's ``padded`` gives it, -1 for "no bound"."""
    if size == INF:
        return -1
    total = _wrap(size + pad)
    return -1 if total < 0 else total


def _upper(x: int) -> int:
    return INF if x >= UNBOUNDED else x


def pad_shape(data: PartialShape, begin: Bounds, end: Bounds,
              mode: str = "constant") -> PartialShape:
    """The padded shape from each dim's ``(lower, upper)`` pad bounds at both ends."""
    dims = data.dims
    if len(begin) != len(dims) or len(end) != len(dims):
        raise ShapeInferenceError(
            f"pads_begin and pads_end must have one element per data dim ({len(dims)}), but "
            f"got {len(begin)} and {len(end)}")
    out = []
    for i, (d, b, e) in enumerate(zip(dims, begin, end, strict=True)):
        b, e = (b[0], _upper(b[1])), (e[0], _upper(e[1]))
        if d.is_static and mode != "constant":
            _check_mode(mode, d.lo, b[0], e[0], i)
        lo_pad, hi_pad = _wrap(b[0] + e[0]), _wrap(b[1] + e[1])
        if lo_pad == 0 and hi_pad == 0:
            out.append(d)
            continue
        lo = max(_padded(d.lo, lo_pad), 0)
        hi = -1 if _unbounded_pad(b) or _unbounded_pad(e) else _padded(d.hi, hi_pad)
        hi = INF if hi < 0 else hi
        out.append(Dimension.from_bounds(lo, hi) if lo <= hi else DYNAMIC)
    return PartialShape.of(tuple(out))


def _unbounded_pad(bounds: tuple[int, int]) -> bool:
    """A pad from 0 up without a bound leaves the dim without an upper bound."""
    return bounds[0] == 0 and bounds[1] >= INF


def _check_mode(mode: str, size: int, b: int, e: int, axis: int) -> None:
    if mode == "edge":
        ok = size >= 1 or (b <= 0 and e <= 0)
    elif mode == "reflect":
        ok = (size >= 2 or (b <= 0 and e <= 0)) and b < size and e < size
    else:
        ok = b <= size and e <= size
    if not ok:
        raise ShapeInferenceError(
            f"{mode} padding copies data, so the data dim must hold its pads, but at axis "
            f"{axis} the dim is {size} and the pads {b} and {e}")


def _pads(t: Tensor, name: str, rank: int | None) -> Bounds | None:
    dims = t.shape.dims
    if dims is not None and len(dims) != 1:
        raise ShapeInferenceError(f"{name} must be 1-D, but got {t.shape}")
    if rank is not None and dims is not None and dims[0].is_static and dims[0].lo > rank:
        raise ShapeInferenceError(
            f"{name} must have at most one element per data dim ({rank}), but got {dims[0]}")
    v = t.value
    return None if v is None else tuple(zip(v[0], v[1], strict=True))


def _pad(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    mode = attrs.text("pad_mode", "constant").lower()
    if mode not in MODES:
        raise ShapeInferenceError(f"pad_mode must be one of {', '.join(MODES)}, but got '{mode}'")
    if mode == "constant" and len(ins) > 3 and ins[3].shape.dims:
        raise ShapeInferenceError(f"the pad value must be a scalar, but got {ins[3].shape}")
    data = ins[0].shape
    rank = data.rank
    begin, end = _pads(ins[1], "pads_begin", rank), _pads(ins[2], "pads_end", rank)
    if rank is None:
        return [Tensor(data, ins[0].etype)]
    if begin is None or end is None:
        return [Tensor(PartialShape.dynamic(rank), ins[0].etype)]
    out = pad_shape(data, begin, end, mode)
    fill = ins[3] if len(ins) > 3 and mode == "constant" else None
    return [Tensor(out, ins[0].etype, _padded_value(ins[0], out, begin, end, mode, fill))]


def _padded_value(t: Tensor, out: PartialShape, begin: Bounds, end: Bounds, mode: str,
                  fill: Tensor | None) -> Value | None:
    """The bounds of a padded value: OpenVINO pads the lower and the upper bound tensors
    alike (in every mode; the pad value's own bounds fill each), when the pads are exact.
    Each output element reads the input at its position less the begin pad, brought back
    into the input by the mode (a negative pad only shifts that position).

    >>> from ovgather.shapes import PartialShape as P
    >>> t = Tensor(P.parse("[3]"), "i64", ((2, 6, 7), (8, 6, 7)))
    >>> _padded_value(t, P.parse("[4]"), ((-1, -1),), ((2, 2),), "reflect", None)
    ((6, 7, 6, 2), (6, 7, 6, 8))
    """
    fill_value = ((0,), (0,)) if fill is None else fill.value
    sides, n = bound_arrays(t), static_size(out)
    if sides is None or fill_value is None or len(fill_value[0]) != 1 or n is None \
            or n > MAX_VALUE_SIZE or any(lo != hi for lo, hi in begin + end):
        return None
    if not sides[0].ndim:
        return t.value  # a scalar has no axis to pad
    sources = [_sources(size, d.lo, b[0], mode)
               for size, d, b in zip(sides[0].shape, out.dims, begin, strict=True)]
    if any(src is None for src in sources):
        return None
    grid = np.ix_(*[np.clip(src, 0, None) for src in sources])
    outside = np.zeros([d.lo for d in out.dims], dtype=bool)
    for axis, src in enumerate(sources):
        outside |= (src < 0).reshape([-1 if a == axis else 1 for a in range(len(sources))])
    padded = []
    for side, filler in zip(sides, fill_value, strict=True):
        moved = side[grid] if side.size else np.empty(outside.shape, dtype=object)
        moved[outside] = filler[0]
        padded.append(moved)
    return value_of_arrays(*padded)


def _sources(size: int, length: int, begin: int, mode: str):
    """For each output position on one axis, the input position it reads (-1: the pad
    value), or None when the mode has nothing to read (an empty axis)."""
    at = np.arange(length) - begin
    inside = (at >= 0) & (at < size)
    if mode == "constant":
        return np.where(inside, at, -1)
    if size == 0:
        return None
    if mode == "edge":
        return np.clip(at, 0, size - 1)
    if mode == "reflect":
        period = max(2 * (size - 1), 1)
        at = np.abs(at) % period
        return np.where(at >= size, period - at, at)
    period = 2 * size
    at = np.where(at < 0, -at - 1, at) % period
    return np.where(at >= size, period - 1 - at, at)


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """Each dim plus its two pads (the pads as expressions, missing ones 0)."""
    from .core.symbolic import Sym
    data, begin, end = ins[0].dims, ins[1].value, ins[2].value
    if data is None or begin is None or end is None:
        return None
    begin = list(begin) + [0] * (len(data) - len(begin))
    end = list(end) + [0] * (len(data) - len(end))
    return [Sym([None if b is None or e is None else d + b + e
                 for d, b, e in zip(data, begin, end, strict=True)])]


SPECS = specs_of({"Pad": _pad}, symbolic=_symbolic)
