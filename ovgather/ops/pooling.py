"""Pooling: MaxPool-1/8/14, AvgPool-1/14/16, AdaptiveAvgPool-8 and AdaptiveMaxPool-8.

Data is ``[N, C, spatial...]`` (3-D to 5-D, N and C not 0); the kernel, strides, pads and
dilations (MaxPool-8/14, AvgPool-16) give one value per spatial dim. Each spatial dim of
the output is

    round((data + pads_begin + pads_end - dilated kernel) / stride) + 1

rounded down (``rounding_type="floor"``) or up (``ceil``, ``ceil_torch``); with
``ceil_torch`` (from MaxPool-14 and AvgPool-14 on) a last window that would start in the
end padding is dropped. With
``auto_pad`` ``same_upper``/``same_lower`` the pads come from a static data dim (the total
that makes the output ``ceil(data / stride)``, the odd one at the end or the start), and a
data dim that is not static gives ``?``; ``valid`` drops the pads. Interval dims follow
OpenVINO's interval arithmetic (see ``core/dims.py``); the kernel must fit the padded
data only when the data dim is static, and an AvgPool with ``exclude-pad`` must not put a
whole window in the padding.

>>> from ovgather.shapes import PartialShape as P
>>> str(pool_shape(P.parse("[1,3,8,2..9]"), (3, 3), (2, 2), (1, 1), (0, 0), (0, 0)))
'[1,3,3,1..4]'
>>> str(pool_shape(P.parse("[1,3,8,2..9]"), (3, 3), (2, 2), (1, 1), (0, 0), (0, 0), "ceil"))
'[1,3,4,1..4]'

MaxPool-8/14 have a second output, the indices, of the same shape. The adaptive poolings
take the output spatial dims from their second input (a shape tensor: value bounds give
intervals); AdaptiveMaxPool-8 also outputs the indices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .core.dims import ceil_div, floor_div, pad_mode, value_dims
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["pool_shape", "same_pads", "adaptive_shape", "SPECS"]

ROUNDING = ("floor", "ceil", "ceil_torch")


def same_pads(size: int, kernel: int, stride: int, mode: str) -> tuple[int, int]:
    """The (begin, end) pads of ``same_upper``/``same_lower`` for a static data dim.

    >>> same_pads(7, 4, 2, "same_upper"), same_pads(7, 4, 2, "same_lower")
    ((1, 2), (2, 1))
    """
    total = max(0, (-(-size // stride) - 1) * stride + kernel - size)
    small, big = total // 2, total - total // 2
    return (small, big) if mode == "same_upper" else (big, small)


def _check(data: PartialShape, kernel, strides, dilations, pads_begin, pads_end) -> None:
    n = len(kernel)
    for name, values in (("pads_begin", pads_begin), ("pads_end", pads_end),
                         ("strides", strides), ("dilations", dilations)):
        if len(values) != n:
            raise ShapeInferenceError(
                f"{name} must have one value per kernel dim ({n}), but got {len(values)}")
    dims = data.dims
    if dims is not None and (len(dims) not in (3, 4, 5) or len(dims) - 2 != n):
        raise ShapeInferenceError(
            f"the data must be 3-D, 4-D or 5-D with one spatial dim per kernel dim ({n}), "
            f"but got {data}")
    if 0 in strides or 0 in dilations:
        raise ShapeInferenceError(
            f"strides and dilations must not be 0, but got {strides} and {dilations}")
    if dims is not None and (dims[0].hi == 0 or dims[1].hi == 0):
        raise ShapeInferenceError(f"the batch and channel dims must not be 0, but got {data}")


def pool_shape(data: PartialShape, kernel: tuple[int, ...], strides: tuple[int, ...],
               dilations: tuple[int, ...], pads_begin: tuple[int, ...],
               pads_end: tuple[int, ...], rounding: str = "floor", mode: str = "explicit",
               exclude_pad: bool = False) -> PartialShape:
    """The output of a pooling over ``data`` (texts of OpenVINO's attributes)."""
    n = len(kernel)
    pads_begin, pads_end = pads_begin or (0,) * n, pads_end or (0,) * n
    _check(data, kernel, strides, dilations, pads_begin, pads_end)
    if data.dims is None:
        return PartialShape.dynamic(n + 2)
    same = mode in ("same_upper", "same_lower")
    divide = floor_div if rounding == "floor" else ceil_div
    out = list(data.dims[:2])
    for i, d in enumerate(data.dims[2:]):
        dk = dilations[i] * (kernel[i] - 1) + 1 if kernel[i] >= 1 else -1
        if same and not d.is_static:
            out.append(DYNAMIC)
            continue
        pb, pe = ((0, 0) if mode == "valid" else
                  same_pads(d.lo, dk, strides[i], mode) if same else (pads_begin[i], pads_end[i]))
        padded = d + (pb + pe)
        if d.is_static:
            if not 0 < dk <= padded.lo:
                raise ShapeInferenceError(
                    f"the dilated kernel must fit the padded data, but at spatial axis {i} the "
                    f"kernel is {dk} and the padded data {padded}")
            if exclude_pad and not (dk > pb and dk > pe):
                raise ShapeInferenceError(
                    f"with exclude-pad a window must not lie in the padding only, but at "
                    f"spatial axis {i} the kernel is {dk} and the pads {pb} and {pe}")
        o = divide(padded - _kernel_dim(dk), strides[i]) + 1
        if rounding == "ceil_torch":
            o = _torch_last_window(o, d, strides[i], pb)
        out.append(o)
    return PartialShape.of(tuple(out))


def _torch_last_window(o: Dimension, d: Dimension, stride: int, pb: int) -> Dimension:
    """``ceil_torch``: each end loses the last window when it would start at or past the
    end of the data and the begin padding (OpenVINO checks the two ends apart, and never
    when the data and begin padding are empty).

    >>> _torch_last_window(Dimension(2, 5), Dimension(0, 6), 2, 0)
    Dimension('2..4')
    """
    def end(out: int, size: int) -> int:
        return out - 1 if size + pb > 0 and (out - 1) * stride >= size + pb else out

    lo = end(o.lo, d.lo)
    if o.hi == INF or d.hi == INF:
        return Dimension.from_bounds(lo, o.hi)
    return Dimension.from_bounds(lo, end(o.hi, d.hi))


def _kernel_dim(dk: int) -> Dimension:
    return DYNAMIC if dk < 0 else Dimension.static(dk)


def _pool_attrs(ins: list[Tensor], attrs: Attrs, dilated: bool, exclude_pad: bool,
                torch: bool) -> PartialShape:
    kernel = attrs.ints("kernel")
    rounding = attrs.text("rounding_type", "floor").lower()
    allowed = ROUNDING if torch else ROUNDING[:2]
    if rounding not in allowed:
        raise ShapeInferenceError(
            f"rounding_type must be {' or '.join(allowed)} in this version, but got '{rounding}'")
    dilations = (attrs.ints("dilations") if dilated else ()) or (1,) * len(kernel)
    return pool_shape(ins[0].shape, kernel, attrs.ints("strides"), dilations,
                      attrs.ints("pads_begin"), attrs.ints("pads_end"), rounding,
                      pad_mode(attrs), exclude_pad)


def _max_pool(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """MaxPool-1, and MaxPool-8/14 with dilations and the indices output."""
    shape = _pool_attrs(ins, attrs, attrs.version >= 8, False, attrs.version >= 14)
    outs = [Tensor(shape, ins[0].etype)]
    if attrs.version >= 8:
        outs.append(Tensor(shape, attrs.text("index_element_type", "i64")))
    return outs[:max(attrs.n_outputs, 1)]


def _avg_pool(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """AvgPool-1/14, and AvgPool-16 with dilations."""
    exclude = attrs.bool("exclude-pad", False)
    shape = _pool_attrs(ins, attrs, attrs.version >= 16, exclude, attrs.version >= 14)
    return [Tensor(shape, ins[0].etype)]


def adaptive_shape(data: PartialShape, sizes: Tensor) -> PartialShape:
    """The output of an adaptive pooling: batch and channels, then the sizes."""
    dims = data.dims
    if dims is not None and len(dims) not in (3, 4, 5):
        raise ShapeInferenceError(f"the data must be 3-D, 4-D or 5-D, but got {data}")
    if dims is None:
        return PartialShape.dynamic()
    n = len(dims) - 2
    given = sizes.shape.dims
    if given is not None and (len(given) != 1 or not given[0].compatible(Dimension.static(n))):
        raise ShapeInferenceError(
            f"the output shape input must hold the {n} spatial dims, but got {sizes.shape}")
    computed_shape_bounds(sizes, "the output shape input")
    spatial = value_dims(sizes)
    if spatial is None:
        return PartialShape.of(dims[:2] + (DYNAMIC,) * n)
    if len(spatial) != n:
        raise ShapeInferenceError(
            f"the output shape input must hold the {n} spatial dims, but got {len(spatial)}")
    return PartialShape.of(dims[:2] + spatial)


def _adaptive(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = adaptive_shape(ins[0].shape, ins[1])
    return [Tensor(shape, ins[0].etype),
            Tensor(shape, attrs.text("index_element_type", "i64"))][:max(attrs.n_outputs, 1)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """Batch and channels kept, each spatial dim ``(H+pb+pe-k)//s+1`` (``ceil`` rounds
    up); an adaptive pooling's spatial dims are its sizes input."""
    from .core.symbolic import Sym, window
    data = ins[0].dims
    if data is None:
        return None
    if facts.op.startswith("Adaptive"):
        spatial = list(ins[1].value) if ins[1].value is not None else [None] * (len(data) - 2)
    else:
        kernel = attrs.ints("kernel")
        rounding = attrs.text("rounding_type", "floor").lower()
        if rounding == "ceil_torch":
            return None
        dilated = attrs.version >= (8 if facts.op == "MaxPool" else 16)
        dilations = (attrs.ints("dilations") if dilated else ()) or (1,) * len(kernel)
        pb = attrs.ints("pads_begin") or (0,) * len(kernel)
        pe = attrs.ints("pads_end") or (0,) * len(kernel)
        strides = attrs.ints("strides")
        spatial = [window(d, kernel[i], strides[i], dilations[i], (pb[i], pe[i]),
                          pad_mode(attrs), rounding == "ceil")
                   for i, d in enumerate(data[2:])]
    return [Sym([*data[:2], *spatial])] * max(attrs.n_outputs, 1)


SPECS = specs_of({"MaxPool": _max_pool, "AvgPool": _avg_pool, "AdaptiveAvgPool": _adaptive,
                  "AdaptiveMaxPool": _adaptive}, symbolic=_symbolic)
