"""GridSample-9: samples ``[N, C, H, W]`` data at the points of a ``[N, H', W', 2]`` grid,
giving ``[N, C, H', W']`` (the batch merged from both inputs).

>>> from ovgather.shapes import PartialShape as P
>>> str(grid_sample_shape(P.parse("[?,3,8,8]"), P.parse("[2..4,5,6,2]")))
'[2..4,3,5,6]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["grid_sample_shape", "SPECS"]

MODES = ("bilinear", "bicubic", "nearest")
PADDINGS = ("zeros", "border", "reflection")


def grid_sample_shape(data: PartialShape, grid: PartialShape) -> PartialShape:
    for shape, name in ((data, "data"), (grid, "grid")):
        if shape.rank not in (None, 4):
            raise ShapeInferenceError(f"the {name} must be 4-D, but got {shape}")
    out = [DYNAMIC] * 4
    d, g = data.dims, grid.dims
    if g is not None:
        if not g[3].compatible(Dimension.static(2)):
            raise ShapeInferenceError(f"the grid's last dim must be 2, but got {grid}")
        out[0], out[2], out[3] = g[:3]
    if d is not None:
        batch = out[0].merge(d[0])
        if batch is None:
            raise ShapeInferenceError(
                f"the data and the grid must have one batch, but got {data} and {grid}")
        out[0], out[1] = batch, d[1]
    return PartialShape.of(tuple(out))


def _grid_sample(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    for name, allowed, default in (("mode", MODES, "bilinear"),
                                   ("padding_mode", PADDINGS, "zeros")):
        if attrs.text(name, default).lower() not in allowed:
            raise ShapeInferenceError(f"{name} must be one of {', '.join(allowed)}, but got "
                                      f"'{attrs.text(name, default)}'")
    attrs.bool("align_corners", False)
    return [Tensor(grid_sample_shape(ins[0].shape, ins[1].shape), ins[0].etype)]


SPECS = specs_of({"GridSample": _grid_sample})
