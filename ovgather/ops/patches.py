"""Image patches to columns and back: ExtractImagePatches-3 and Col2Im-15.

ExtractImagePatches takes ``[N, C, H, W]`` and ``sizes``, ``strides`` and ``rates`` of two
values each (strides and rates positive) and gives ``[N, C * rows * cols, H', W']``: with
``auto_pad="valid"`` each spatial dim is ``ceil((D - rate * (size - 1)) / stride)``
(the subtraction stops at 0), with ``same_upper``/``same_lower`` ``ceil(D / stride)``.

Col2Im takes columns ``[N, C * k0 * k1, L]`` (or ``[C * k0 * k1, L]`` unbatched), the
``output_size`` ``[H, W]`` and ``kernel_size`` (both 1-D of two elements) and gives
``[N, C, H, W]``. ``C`` needs a static column dim and a constant kernel (then it must
divide the dim evenly); ``H`` and ``W`` come from the output size's value or bounds. When
everything is static, ``L`` must equal the number of blocks the strides, dilations and
pads give.

>>> from ovgather.shapes import PartialShape as P
>>> str(patches_shape(P.parse("[1,3,10,2..9]"), (3, 3), (5, 5), (1, 1), "valid"))
'[1,27,2,..2]'
"""

from __future__ import annotations

import math

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import ceil_div, value_dims
from .core.inputs import InputMaker
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds, exact_ints

__all__ = ["patches_shape", "SPECS"]

PADS = ("valid", "same_upper", "same_lower")


def _pairs(**values: tuple[int, ...]) -> None:
    for name, v in values.items():
        if len(v) != 2:
            raise ShapeInferenceError(f"{name} must hold two values, but got {list(v)}")


def patches_shape(data: PartialShape, sizes: tuple[int, ...], strides: tuple[int, ...],
                  rates: tuple[int, ...], pad: str) -> PartialShape:
    if data.rank not in (None, 4):
        raise ShapeInferenceError(f"the data must be 4-D, but got {data}")
    _pairs(sizes=sizes, strides=strides, rates=rates)
    if min(strides) < 1 or min(rates) < 1:
        raise ShapeInferenceError(
            f"strides and rates must be positive, but got {list(strides)} and {list(rates)}")
    if pad not in PADS:
        raise ShapeInferenceError(f"auto_pad must be one of {', '.join(PADS)}, but got '{pad}'")
    dims = data.dims
    if dims is None:
        return PartialShape.dynamic(4)
    out = [dims[0], dims[1] * math.prod(sizes)]
    for d, size, stride, rate in zip(dims[2:], sizes, strides, rates, strict=True):
        out.append(ceil_div(d - rate * (size - 1) if pad == "valid" else d, stride))
    return PartialShape.of(tuple(out))


def _extract_image_patches(ins: list[Tensor], attrs: Attrs,
                           trace: Trace | None = None) -> list[Tensor]:
    shape = patches_shape(ins[0].shape, attrs.ints("sizes"), attrs.ints("strides"),
                          attrs.ints("rates"), attrs.text("auto_pad", "valid").lower())
    return [Tensor(shape, ins[0].etype)]


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_WORD = 1 << 64


def _blocks(size: tuple[int, ...], kernel: tuple[int, ...], attrs: Attrs) -> int:
    """The number of sliding blocks Col2Im's attributes give over ``size``, computed as
    OpenVINO does: in unsigned 64-bit words (its attributes are ``size_t``), so a window
    larger than the padded data wraps around, and the product read back as int64."""
    begin, end = attrs.ints("pads_begin", (0, 0)), attrs.ints("pads_end", (0, 0))
    strides, dilations = attrs.ints("strides", (1, 1)), attrs.ints("dilations", (1, 1))
    if len(strides) < 2 or 0 in strides[:2]:
        raise ShapeInferenceError(f"Col2Im needs two non-zero strides, but got {list(strides)}")
    total = 1
    for d in range(2):
        span = (size[d] + begin[d] + end[d] - dilations[d] * (kernel[d] - 1) - 1) % _WORD
        total = total * (span // (strides[d] % _WORD) + 1) % _WORD
    return total - _WORD if total >= _WORD // 2 else total


def _col2im(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    data = ins[0].shape
    if data.rank not in (None, 2, 3):
        raise ShapeInferenceError(f"the data must be 2-D or 3-D, but got {data}")
    for t, name in ((ins[1], "output_size"), (ins[2], "kernel_size")):
        if t.shape.dims is not None and t.shape.dims != (Dimension.static(2),):
            raise ShapeInferenceError(f"{name} must be 1-D of two elements, but got {t.shape}")
    if data.dims is None:
        return [Tensor(data, ins[0].etype)]
    batched = len(data.dims) == 3
    columns, length = data.dims[batched], data.dims[batched + 1]
    out = list(data.dims[:1] if batched else ()) + [DYNAMIC] * 3
    kernel = exact_ints(ins[2])
    if kernel is not None and columns.is_static:
        divisor = kernel[0] * kernel[1]
        if divisor == 0 or columns.lo % divisor:
            raise ShapeInferenceError(
                f"the column dim must divide by the kernel's product, but got {columns} and "
                f"{list(kernel)}")
        out[batched] = Dimension.static(_trunc_div(columns.lo, divisor))
    computed_shape_bounds(ins[1], "output_size")
    size = value_dims(ins[1])
    if size is not None:
        out[batched + 1:] = size
        if kernel is not None and length.is_static and all(d.is_static for d in size):
            blocks = _blocks((size[0].lo, size[1].lo), kernel, attrs)
            if blocks != length.lo:
                raise ShapeInferenceError(
                    f"the data must hold {blocks} blocks, but got {length}")
    return [Tensor(PartialShape.of(tuple(out)), ins[0].etype)]


class _Col2ImInputs(InputMaker):
    """Valid ``output_size`` and ``kernel_size`` for a run that feeds them (Parameters):
    zeros, the usual integer input, make the CPU plugin divide by zero and end the
    process."""

    def size_values(self, shapes: list[list[int] | None], attrs: Attrs
                    ) -> dict[int, list[int]]:
        """By input position: a kernel of ones (every column dim divides by it) and, when
        the data's shape is known, an output size ``[H, W]`` whose blocks number the
        data's last dim (``W`` as small as the strides and pads allow)."""
        values = {2: [1, 1]}
        data = shapes[0] if shapes else None
        if not data or len(data) not in (2, 3):
            return values
        begin, end = attrs.ints("pads_begin", (0, 0)), attrs.ints("pads_end", (0, 0))
        strides = attrs.ints("strides", (1, 1))
        if min(strides[:2], default=0) < 1:
            return values
        pads = [begin[d] + end[d] for d in range(2)]
        for w in range(1, 4 * strides[1] + 2):
            across = (w + pads[1] - 1) // strides[1] + 1
            if across < 1 or data[-1] % across:
                continue
            h = (data[-1] // across - 1) * strides[0] + 1 - pads[0]
            if h >= 1 and _blocks((h, w), (1, 1), attrs) == data[-1]:
                values[1] = [h, w]
                break
        return values


SPECS = [*specs_of({"ExtractImagePatches": _extract_image_patches}),
         *specs_of({"Col2Im": _col2im}, {15: {"inputs": _Col2ImInputs()}})]
