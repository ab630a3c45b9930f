"""Resizing: Interpolate-1, Interpolate-4 and Interpolate-11.

Interpolate-1 sets the dims its ``axes`` attribute names to its second input (the target
spatial shape). Interpolate-4 and -11 first pad the data (``pads_begin``/``pads_end``
attributes, one per dim, missing ones 0), then set the dims named by the ``axes`` input
(all of them when there is none) from ``sizes`` or by ``scales``, as
``shape_calculation_mode`` says; Interpolate-4 takes both inputs (and uses one),
Interpolate-11 takes the one it uses. Sizes are a shape tensor: value bounds give
interval dims. A scale multiplies both ends of a dim in float32 after adding 1e-6, and
truncates (OpenVINO's ``dim::scale``):

>>> from ovgather.shapes import Dimension
>>> scaled(Dimension(3, 7), 2.0), scaled(Dimension(5), 0.5), scaled(Dimension(5), 1.0)
(Dimension('6..14'), Dimension('2'), Dimension('5'))

Unknown sizes, scales or axes leave the dims they would set ``?`` (unknown axes: all).
The scales are floats: a walk that carries float constants' values gives them; one that
does not gets ``?`` there.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from .._lazy import numpy as np
from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .core.dims import bounds_dim, shifted, value_dims
from .core.inputs import InputMaker
from .core.spec import Attrs, Trace, specs_of
from .core.values import INT_TYPES, Tensor, computed_shape_bounds, exact_ints

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Expr, Facts, Sym

__all__ = ["scaled", "interpolate_shape", "SPECS"]

SCALE_TYPES = ("f32", "f16", "bf16", "dynamic")
SIZE_TYPES = ("i32", "i64", "u32", "u64", "dynamic")
_EPSILON = 1.0e-6  # added in float32


def scaled(d: Dimension, scale: float) -> Dimension:
    """``d`` times ``scale`` as OpenVINO computes it (float32, truncated)."""
    s = np.float32(scale)
    if s == np.float32(1.0):
        return d
    s = np.float32(s + np.float32(_EPSILON))
    hi = INF if d.hi == INF else int(np.float32(d.hi) * s)
    lo = hi if d.is_static else int(np.float32(d.lo) * s)
    return bounds_dim(lo, hi)


def _one_d(t: Tensor, name: str) -> None:
    if t.shape.dims is not None and len(t.shape.dims) != 1:
        raise ShapeInferenceError(f"the {name} input must be 1-D, but got {t.shape}")


def _axes(t: Tensor | None, rank: int) -> tuple[int, ...] | None:
    if t is None:
        return tuple(range(rank))
    axes = exact_ints(t)
    if axes is not None and not all(0 <= a < rank for a in axes):
        raise ShapeInferenceError(f"the axes must lie in [0, {rank - 1}], but got {list(axes)}")
    return axes


def interpolate_shape(data: PartialShape, axes: tuple[int, ...] | None, pads: tuple, values,
                      use_scales: bool) -> PartialShape:
    """Interpolate-4/11 from the data shape, the axes (None: unknown), the attribute pads,
    and the sizes (dims) or scales (floats), None when unknown."""
    rank = len(data.dims)
    if axes is None:
        return PartialShape.dynamic(rank)
    begin, end = (tuple(p[:rank]) + (0,) * (rank - len(p)) for p in pads)
    out = [shifted(d, b + e) for d, b, e in zip(data.dims, begin, end, strict=True)]
    if values is not None and len(values) < len(axes):
        name = "scales" if use_scales else "sizes"
        raise ShapeInferenceError(
            f"the {name} input must have a value per axis ({len(axes)}), but got {len(values)}")
    for n, axis in enumerate(axes):
        if values is None:
            out[axis] = DYNAMIC
        else:
            out[axis] = scaled(out[axis], values[n]) if use_scales else values[n]
    return PartialShape.of(tuple(out))


def _check_type(t: Tensor, floats: bool) -> None:
    allowed = SCALE_TYPES if floats else SIZE_TYPES
    if t.etype not in allowed:
        raise ShapeInferenceError(
            f"the {'scales' if floats else 'sizes'} input must be of type "
            f"{', '.join(allowed[:-1])}, but got {t.etype}")


def _interpolate_1(ins: list[Tensor], attrs: Attrs) -> list[Tensor]:
    if ins[1].etype not in INT_TYPES and ins[1].etype != "dynamic":
        raise ShapeInferenceError(
            f"the target shape input must be of an integer type, but got {ins[1].etype}")
    data = ins[0].shape
    if data.dims is None:
        return [Tensor(data, ins[0].etype)]
    axes = attrs.ints("axes")
    rank = len(data.dims)
    if not all(0 <= a < rank for a in axes):
        raise ShapeInferenceError(f"the axes must lie in [0, {rank - 1}], but got {list(axes)}")
    computed_shape_bounds(ins[1], "the target shape")
    target = value_dims(ins[1])
    out = list(data.dims)
    for n, axis in enumerate(axes):
        out[axis] = target[n] if target is not None and n < len(target) else DYNAMIC
    return [Tensor(PartialShape.of(tuple(out)), ins[0].etype)]


def _interpolate(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    if attrs.version == 1:
        return _interpolate_1(ins, attrs)
    use_scales = attrs.text("shape_calculation_mode", "sizes").lower() == "scales"
    if attrs.version == 4:
        if len(ins) not in (3, 4):
            raise ShapeInferenceError(f"Interpolate-4 takes 3 or 4 inputs, but got {len(ins)}")
        values_in, axes_in = ins[2 if use_scales else 1], ins[3] if len(ins) > 3 else None
        _one_d(values_in, "scales" if use_scales else "sizes")
        _check_type(ins[1], False)
        _check_type(ins[2], True)
    else:
        if len(ins) not in (2, 3):
            raise ShapeInferenceError(f"Interpolate-11 takes 2 or 3 inputs, but got {len(ins)}")
        values_in, axes_in = ins[1], ins[2] if len(ins) > 2 else None
        for t in ins[1:]:
            _one_d(t, "sizes, scales and axes")
        _check_type(values_in, use_scales)
    if axes_in is not None:
        _one_d(axes_in, "axes")
    data = ins[0].shape
    if data.dims is None:
        return [Tensor(data, ins[0].etype)]
    values = values_in.value[0] if use_scales and values_in.value is not None else None
    if not use_scales:
        computed_shape_bounds(values_in, "the sizes")
        values = value_dims(values_in)
    pads = (attrs.ints("pads_begin"), attrs.ints("pads_end"))
    shape = interpolate_shape(data, _axes(axes_in, len(data.dims)), pads, values, use_scales)
    return [Tensor(shape, ins[0].etype)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """The axes' dims are the sizes, or the dims times a scale that is a small fraction
    (``2*H``, ``H//2``); the pads add to every dim."""
    from .core.symbolic import Sym
    data = ins[0].dims
    if data is None or attrs.version == 1:
        return None
    use_scales = attrs.text("shape_calculation_mode", "sizes").lower() == "scales"
    at = (2 if use_scales else 1) if attrs.version == 4 else 1
    axes_at = 3 if attrs.version == 4 else 2
    axes = _axes(facts.inputs[axes_at] if len(ins) > axes_at else None, len(data))
    if axes is None:
        return None
    begin, end = (tuple(p[:len(data)]) + (0,) * (len(data) - len(p))
                  for p in (attrs.ints("pads_begin"), attrs.ints("pads_end")))
    out = [d + b + e for d, b, e in zip(data, begin, end, strict=True)]
    scales = facts.inputs[at].value[0] if use_scales and facts.inputs[at].value else None
    for n, axis in enumerate(axes):
        if use_scales:
            out[axis] = None if scales is None else _times(out[axis], scales[n])
        else:
            out[axis] = ins[at].value[n] if ins[at].value is not None else None
    return [Sym(out)]


def _times(d: Expr, scale: float) -> Expr | None:
    """``floor(d * scale)`` for a scale that is a fraction with a small denominator."""
    ratio = Fraction(scale).limit_denominator(16)
    if abs(float(ratio) - scale) > 1e-6 or ratio <= 0:
        return None
    return (d * ratio.numerator) // ratio.denominator


class _InterpolateInputs(InputMaker):
    """Valid sizes (and axes) for a run that feeds them (Parameters): zeros, the usual
    integer input, resize the batch and channels too, which the CPU plugin refuses (it
    resizes only spatial dims)."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """By input position: sizes that keep every dim (padded) but the last of a
        rank-3 or higher input, which doubles; the axes, when fed, the last ``n``."""
        data = shapes[0] if shapes else None
        sizes = shapes[1] if len(shapes) > 1 else None
        if data is None or sizes is None:
            return {}
        rank, n = len(data), sizes[0] if sizes else 1
        if attrs.version == 1:
            axes = list(attrs.ints("axes"))
        else:
            axes = list(range(rank - n, rank)) if n <= rank else []
        if len(axes) != n or not all(0 <= a < rank for a in axes):
            return {}
        begin, end = attrs.ints("pads_begin", ()), attrs.ints("pads_end", ())
        padded = [d + (begin[a] if a < len(begin) else 0) + (end[a] if a < len(end) else 0)
                  for a, d in enumerate(data)]
        values = [padded[a] * (2 if a == rank - 1 and rank >= 3 else 1) for a in axes]
        out = {1: values}
        if attrs.version > 1:
            out[3 if attrs.version == 4 else 2] = axes
        return out


SPECS = specs_of({"Interpolate": _interpolate}, symbolic=_symbolic,
                 inputs=_InterpolateInputs())
