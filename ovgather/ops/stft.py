"""STFT-15, the short-time Fourier transform of a ``[signal]`` or ``[batch, signal]``, and
ISTFT-16, its inverse.

``window`` is 1-D, ``frame_size`` and ``frame_step`` scalars. With both constants the
output is ``[batch, frames, frame_size / 2 + 1, 2]`` (no batch for a 1-D signal;
``transpose_frames`` swaps the frames and the samples), ``frames = floor((signal -
frame_size) / frame_step) + 1``; the frame size must be positive and at most the signal's
upper bound, the step positive, a static window at least 1 and at most the frame size.
Otherwise ``[batch, ?, ?, 2]``.

ISTFT takes ``[samples, frames, 2]`` or ``[batch, samples, frames, 2]`` and gives
``[signal]`` (``[batch, signal]``): the value of the optional ``signal_length`` (a scalar
or one element), else ``(frames - 1) * frame_step + frame_size``, less the even part of
the frame size with ``center``; ``?`` without constant sizes. A static input must have
``frame_size / 2 + 1`` samples.

>>> from ovgather.shapes import PartialShape as P
>>> print(stft_shape(P.parse("[2,10..16]"), P.parse("[4]"), 4, 2, transpose=False))
[2,4..7,3,2]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import floor_div, value_dims
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds, exact_ints

__all__ = ["stft_shape", "SPECS"]

TWO = Dimension.static(2)


def stft_shape(signal: PartialShape, window: PartialShape, size: int | None,
               step: int | None, transpose: bool) -> PartialShape:
    if signal.rank not in (None, 1, 2):
        raise ShapeInferenceError(f"the signal must be 1-D or 2-D, but got {signal}")
    if window.rank not in (None, 1):
        raise ShapeInferenceError(f"the window must be 1-D, but got {window}")
    dims = signal.dims
    if dims is None:
        return signal
    batch, length = dims[:-1], dims[-1]
    if size is None or step is None:
        return PartialShape.of((*batch, DYNAMIC, DYNAMIC, TWO))
    if not 0 < size <= length.hi:
        raise ShapeInferenceError(
            f"the frame size must lie in [1, {length}], but got {size}")
    if step <= 0:
        raise ShapeInferenceError(f"the frame step must be positive, but got {step}")
    if window.is_static and not 0 < window.dims[0].lo <= size:
        raise ShapeInferenceError(
            f"the window must hold 1 to frame_size ({size}) values, but got {window}")
    frames = floor_div(length - size, step) + 1
    samples = Dimension.static(size // 2 + 1)
    middle = (samples, frames) if transpose else (frames, samples)
    return PartialShape.of((*batch, *middle, TWO))


def _scalar(t: Tensor, name: str) -> int | None:
    if t.shape.rank not in (None, 0):
        raise ShapeInferenceError(f"{name} must be a scalar, but got {t.shape}")
    value = exact_ints(t)
    return value[0] if value else None


def _stft(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    size, step = _scalar(ins[2], "frame_size"), _scalar(ins[3], "frame_step")
    shape = stft_shape(ins[0].shape, ins[1].shape, size, step,
                       attrs.bool("transpose_frames", False))
    return [Tensor(shape, ins[0].etype)]


def _istft_length(data: PartialShape, size: int | None, step: int | None, center: bool,
                  length: Tensor | None) -> Dimension:
    if length is not None:
        dims = length.shape.dims
        if dims is not None and not (dims == () or (len(dims) == 1 and dims[0].compatible(
                Dimension.static(1)))):
            raise ShapeInferenceError(
                f"signal_length must be a scalar or hold one element, but got {length.shape}")
        computed_shape_bounds(length, "signal_length")
        value = value_dims(length)
        return value[0] if value else DYNAMIC
    if size is None or step is None:
        return DYNAMIC
    signal = (data.dims[-2] - 1) * step + size
    return signal - (size & ~1) if center else signal


def _istft(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    data, window = ins[0].shape, ins[1].shape
    if data.rank not in (None, 3, 4):
        raise ShapeInferenceError(f"the data must be 3-D or 4-D, but got {data}")
    if window.rank not in (None, 1):
        raise ShapeInferenceError(f"the window must be 1-D, but got {window}")
    size, step = _scalar(ins[2], "frame_size"), _scalar(ins[3], "frame_step")
    if size is not None:
        if size <= 0:
            raise ShapeInferenceError(f"the frame size must be positive, but got {size}")
        if window.is_static and not 0 < window.dims[0].lo <= size:
            raise ShapeInferenceError(
                f"the window must hold 1 to frame_size ({size}) values, but got {window}")
        if data.is_static and not data.dims[-3].compatible(Dimension.static(size // 2 + 1)):
            raise ShapeInferenceError(
                f"the data must have frame_size / 2 + 1 samples, but got {data}")
    if step is not None and step <= 0:
        raise ShapeInferenceError(f"the frame step must be positive, but got {step}")
    if data.dims is None:
        return [Tensor(data, ins[0].etype)]
    signal = _istft_length(data, size, step, attrs.bool("center", False),
                           ins[4] if len(ins) > 4 else None)
    return [Tensor(PartialShape.of(data.dims[:-3] + (signal,)), ins[0].etype)]


SPECS = specs_of({"STFT": _stft, "ISTFT": _istft})
