"""DetectionOutput-1/8: the SSD detections ``[1, 1, N, 7]``.

Inputs: box logits ``[images, priors * loc_classes * 4]``, class predictions
``[images, priors * classes]``, proposals ``[1 or images, 1 or 2, priors * size]`` (size 4
when ``normalized``, else 5; 1 row with ``variance_encoded_in_target``), optionally
auxiliary class ``[images, priors * 2]`` and box predictions (the box logits' shape).
``loc_classes`` is 1 with ``share_location``, else the classes. Version 1 takes the classes
from ``num_classes``; version 8 works them out from the shapes, as OpenVINO does (the
priors from the proposals or the auxiliary classes, then the classes from the class
predictions or the box logits). Every static dim must fit the numbers found.

``N`` is ``images * keep_top_k[0]`` when that is positive, ``images * top_k * classes``
when ``keep_top_k[0]`` is -1 and ``top_k`` positive, else ``images * priors * classes``
(an unknown count is ``?``).
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["SPECS"]

NAMES = ("box logits", "class predictions", "proposals", "auxiliary class predictions",
         "auxiliary box predictions")


def _require(ok: bool, rule: str, shapes: list[PartialShape]) -> None:
    if not ok:
        raise ShapeInferenceError(f"{rule}, but got {', '.join(str(s) for s in shapes)}")


def _static(shape: PartialShape, i: int) -> int | None:
    """Dim ``i`` of a shape of known rank when static, else None."""
    if shape.dims is None or not shape.dims[i].is_static:
        return None
    return shape.dims[i].lo


def _divide(total: int, part: int, rule: str, shapes) -> int:
    _require(part != 0 and total % part == 0, rule, shapes)
    return total // part


def _deduce(shapes: list[PartialShape], attrs: Attrs, size: int) -> tuple[int, int]:
    """DetectionOutput-8's (classes, priors) from the shapes."""
    for shape, rank, name in zip(shapes, (2, 2, 3, 2, 2), NAMES, strict=False):
        _require(shape.rank in (None, rank), f"the {name} must be {rank}-D", shapes)
    box, preds, proposals = shapes[:3]
    aux = len(shapes) == 5
    priors = classes = 0
    p2 = _static(proposals, 2)
    if p2 is not None:
        priors = _divide(p2, size, "the proposals must hold whole prior boxes", shapes)
        _require(priors > 0, "there must be prior boxes", shapes)
    a1 = _static(shapes[3], 1) if aux else None
    if not priors and a1 is not None:
        priors = _divide(a1, 2, "the auxiliary classes must hold two per prior", shapes)
        _require(priors > 0, "there must be prior boxes", shapes)
    if priors > 0:
        c1 = _static(preds, 1)
        if c1 is not None:
            classes = _divide(c1, priors, "the class predictions must hold whole priors", shapes)
        sources = [box] + ([shapes[4]] if aux else [])
        for shape in sources if not attrs.bool("share_location", True) else ():
            b1 = _static(shape, 1)
            if not classes and b1 is not None:
                classes = _divide(b1, priors * 4, "the box logits must hold whole priors",
                                  shapes)
    return classes, priors


def _images(shapes: list[PartialShape], classes: int, priors: int, loc: int):
    """The images (a dim) and the priors after the box logits and class predictions."""
    box, preds = shapes[0], shapes[1]
    images, updated = DYNAMIC, False
    if box.dims is not None:
        _require(len(box.dims) == 2, "the box logits must be 2-D", shapes)
        images, updated = box.dims[0], True
        b1 = _static(box, 1)
        if not priors and b1 is not None:
            priors = _divide(b1, loc * 4, "the box logits must hold whole priors", shapes)
        if priors > 0 and loc > 0:
            _require(box.dims[1].compatible(Dimension.static(priors * loc * 4)),
                     "the box logits must hold 4 numbers per prior and class", shapes)
    if preds.dims is not None:
        _require(len(preds.dims) == 2, "the class predictions must be 2-D", shapes)
        if (not updated or not images.is_static) and preds.dims[0].is_static:
            images = preds.dims[0]
        else:
            _require(preds.dims[0].compatible(images), "the inputs must have one batch", shapes)
        c1 = _static(preds, 1)
        if c1 is not None and classes:
            if not priors:
                priors = _divide(c1, classes, "the class predictions must hold whole priors",
                                 shapes)
            else:
                _require(c1 == priors * classes, "the class predictions must hold every "
                         "prior and class", shapes)
    return images, priors


def _proposals_and_aux(shapes, attrs: Attrs, images: Dimension, priors: int, size: int) -> int:
    proposals = shapes[2]
    if proposals.dims is not None:
        _require(len(proposals.dims) == 3, "the proposals must be 3-D", shapes)
        first = proposals.dims[0]
        _require(first.compatible(Dimension.static(1)) or first.compatible(images),
                 "the proposals must be for one image or every image", shapes)
        rows = 1 if attrs.bool("variance_encoded_in_target", False) else 2
        _require(proposals.dims[1].compatible(Dimension.static(rows)),
                 f"the proposals must have {rows} rows", shapes)
        p2 = _static(proposals, 2)
        if p2 is not None and not priors:
            priors = _divide(p2, size, "the proposals must hold whole prior boxes", shapes)
        elif p2 is not None:
            _require(p2 == priors * size, "the proposals must hold every prior box", shapes)
    if len(shapes) == 5:
        aux = shapes[3]
        if aux.dims is not None:
            _require(len(aux.dims) == 2 and aux.dims[0].compatible(images),
                     "the auxiliary classes must be 2-D, one row per image", shapes)
            if priors:
                _require(aux.dims[1].compatible(Dimension.static(priors * 2)),
                         "the auxiliary classes must hold two per prior", shapes)
            if aux.dims[1].is_static:
                priors = aux.dims[1].lo // 2
        _require(shapes[4].compatible(shapes[0]),
                 "the auxiliary boxes must have the box logits' shape", shapes)
    return priors


def detection_shape(shapes: list[PartialShape], attrs: Attrs) -> PartialShape:
    size = 4 if attrs.bool("normalized", False) else 5
    if attrs.version >= 8:
        classes, priors = _deduce(shapes, attrs, size)
    else:
        classes, priors = attrs.int("num_classes"), 0
    loc = 1 if attrs.bool("share_location", True) else classes
    images, priors = _images(shapes, classes, priors, loc)
    priors = _proposals_and_aux(shapes, attrs, images, priors, size)
    keep, top_k = attrs.ints("keep_top_k", (-1,)), attrs.int("top_k", -1)
    per_image = (Dimension.static(priors) if priors else DYNAMIC)
    classes_dim = Dimension.static(classes) if classes else DYNAMIC
    if keep and keep[0] > 0:
        n = images * keep[0]
    elif keep and keep[0] == -1 and top_k > 0:
        n = images * top_k * classes_dim
    else:
        n = images * per_image * classes_dim
    return PartialShape.of((Dimension.static(1), Dimension.static(1), n, Dimension.static(7)))


def _detection_output(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None):
    return [Tensor(detection_shape([t.shape for t in ins], attrs), ins[0].etype)]


SPECS = specs_of({"DetectionOutput": _detection_output})
