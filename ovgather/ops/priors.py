"""Prior boxes: PriorBox-1/8 and PriorBoxClustered-1.

Both take the feature map size and the image size (1-D integer tensors, the first of two
elements) and give ``[2, H * W * priors * 4]``: the boxes and their variances, ``H`` and
``W`` the feature map size's value or bounds (``?`` when unknown). PriorBoxClustered has
one prior per ``width`` value (as many as ``height`` values); PriorBox counts its priors
from the aspect ratios (unique after rounding to 6 decimals, flipped ones added with
``flip``, and 1), the sizes and the densities, as OpenVINO's ``number_of_priors`` does.

>>> number_of_priors({"min_size": "2", "max_size": "4", "aspect_ratio": "2", "flip": "true"})
4
"""

from __future__ import annotations

import math

from .._lazy import numpy as np
from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import value_dims
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds

__all__ = ["number_of_priors", "SPECS"]


def floats(attrs, name: str) -> list[float]:
    """A comma-separated list of numbers (``""`` is empty)."""
    text = str(attrs.get(name, "") or "").strip()
    try:
        return [float(p) for p in text.split(",")] if text else []
    except ValueError:
        raise ShapeInferenceError(
            f"the attribute '{name}' must be a list of numbers, but got '{text}'") from None


def _rounded(x: np.float32) -> np.float32:
    """``round(x * 1e6) / 1e6`` as OpenVINO stores it (half away from zero, in float32)."""
    scaled = float(x) * 1e6
    if not math.isfinite(scaled):
        return np.float32(scaled)
    return np.float32(math.copysign(math.floor(abs(scaled) + 0.5), scaled) / 1e6)


def _aspect_ratios(ratios: list[float], flip: bool) -> int:
    unique = {np.float32(1)}
    for r in ratios:
        r32 = np.float32(r)
        unique.add(_rounded(r32))
        if flip:
            with np.errstate(divide="ignore"):
                unique.add(_rounded(np.float32(1) / r32))
    return len(unique)


def number_of_priors(attrs) -> int:
    """The priors PriorBox puts at each feature map point."""
    ratios = _aspect_ratios(floats(attrs, "aspect_ratio"),
                            Attrs(attrs).bool("flip", False))
    min_size, max_size = floats(attrs, "min_size"), floats(attrs, "max_size")
    if Attrs(attrs).bool("scale_all_sizes", True):
        n = ratios * len(min_size) + len(max_size)
    else:
        n = ratios + len(min_size) - 1
    fixed_size, fixed_ratio = floats(attrs, "fixed_size"), floats(attrs, "fixed_ratio")
    if fixed_size:
        n = ratios * len(fixed_size)
    for density in floats(attrs, "density"):
        d = int(density)
        n += (len(fixed_ratio) if fixed_ratio else ratios) * (d * d - 1)
    return n


def _priors(clustered: bool):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        if clustered and len(floats(attrs, "width")) != len(floats(attrs, "height")):
            raise ShapeInferenceError(
                f"width and height must have one value per prior, but got "
                f"'{attrs.text('width', '')}' and '{attrs.text('height', '')}'")
        size, image = ins[0].shape, ins[1].shape
        if size.rank not in (None, 1) or not (size.rank is None or image.rank in (None, 1)):
            raise ShapeInferenceError(
                f"the output and image sizes must be 1-D, but got {size} and {image}")
        count = DYNAMIC
        computed_shape_bounds(ins[0], "the output size")
        dims = value_dims(ins[0])
        if dims is not None:
            if len(dims) != 2:
                raise ShapeInferenceError(
                    f"the output size must hold two values, but got {len(dims)}")
            priors = len(floats(attrs, "width")) if clustered else number_of_priors(attrs)
            count = dims[0] * dims[1] * max(priors, 0) * 4
        return [Tensor(PartialShape.of((Dimension.static(2), count)), "f32")]

    return rule


SPECS = specs_of({"PriorBox": _priors(False), "PriorBoxClustered": _priors(True)})
