"""ROIPooling-1, PSROIPooling-1, ROIAlign-3/9 and ROIAlignRotated-15 against OpenVINO on
seeded random feature maps, ROIs and batch indices (static, interval, dynamic, dynamic
rank, wrong ranks and widths) and attributes (pooled sizes, scales, modes, groups)."""

from __future__ import annotations

import openvino as ov
import openvino.opset1 as ov1
import openvino.opset2 as ov2
import openvino.opset3 as ov3
import openvino.opset9 as ov9
import openvino.opset15 as ov15
import pytest
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim, random_shape


def _feats(rng, channels: str = "3") -> str:
    if rng.random() < 0.1:
        return random_shape(rng)
    dims = [random_dim(rng), channels if rng.random() < 0.7 else random_dim(rng),
            random_dim(rng), random_dim(rng)]
    return "[" + ",".join(dims) + "]"


def _rois(rng, k: int) -> str:
    if rng.random() < 0.1:
        return random_shape(rng)
    width = str(k) if rng.random() < 0.85 else rng.choice(("?", "4", "5", "2..6"))
    return f"[{random_dim(rng)},{width}]"


def roi_pooling_case(rng) -> Case:
    feats, rois = _feats(rng), _rois(rng, 5)
    h, w = rng.choice((1, 2, 3, 7, 0)), rng.choice((1, 2, 4))
    scale = rng.choice((1.0, 0.0625, 0.5, 0.0, -1.0))
    method = rng.choice(("max", "bilinear", "max", "avg"))
    attrs = {"pooled_h": str(h), "pooled_w": str(w), "spatial_scale": str(scale),
             "method": method}
    return Case(lambda: ov2.roi_pooling(ov_param(feats), ov_param(rois), [h, w], scale, method),
                "ROIPooling", 2, [tensor(feats), tensor(rois)], attrs,
                label=f"{feats} {rois} {attrs}")


def psroi_pooling_case(rng) -> Case:
    dim, group = rng.choice((1, 2, 3)), rng.choice((1, 2, 3, 0))
    bins = rng.choice((1, 2, 0)), rng.choice((1, 2, 3))
    mode = rng.choice(("average", "bilinear", "max"))
    area = group * group if mode == "average" else bins[0] * bins[1]
    feats, rois = _feats(rng, str(dim * area)), _rois(rng, 5)
    scale = rng.choice((1.0, 0.0625, 0.0, -2.0))
    attrs = {"output_dim": str(dim), "group_size": str(group), "spatial_scale": str(scale),
             "spatial_bins_x": str(bins[0]), "spatial_bins_y": str(bins[1]), "mode": mode}
    return Case(lambda: ov1.psroi_pooling(ov_param(feats), ov_param(rois), dim, group, scale,
                                          bins[0], bins[1], mode),
                "PSROIPooling", 1, [tensor(feats), tensor(rois)], attrs,
                label=f"{feats} {rois} {attrs}")


def deformable_psroi_case(rng) -> Case:
    feats, rois = _feats(rng), _rois(rng, 5)
    offsets = [random_shape(rng, 4) if rng.random() < 0.9 else random_shape(rng)] \
        if rng.random() < 0.5 else []
    dim, group = rng.choice((1, 3, 8, 0)), rng.choice((1, 2, 7, 0))
    attrs = {"output_dim": str(dim), "group_size": str(group), "spatial_scale": "0.0625"}
    return Case(lambda: ov1.deformable_psroi_pooling(
        ov_param(feats), ov_param(rois), dim, 0.0625, group,
        offsets=ov_param(offsets[0]) if offsets else None),
        "DeformablePSROIPooling", 1, [tensor(feats), tensor(rois)] + [tensor(o) for o in offsets],
        attrs, label=f"{feats} {rois} {offsets} {attrs}")


def test_deformable_psroi_pooling_infers_what_openvino_infers():
    agree_with_openvino("deformable_psroi_pooling", deformable_psroi_case, 1000)


def roi_align_case(rng, version: int) -> Case:
    feats, rois = _feats(rng), _rois(rng, 5 if version == 15 else 4)
    indices = random_shape(rng, 1) if rng.random() < 0.9 else random_shape(rng)
    if rng.random() < 0.5 and rois[1:-1].split(",")[0] not in ("", "..."):
        indices = "[" + rois[1:-1].split(",")[0] + "]"
    h, w, ratio = rng.choice((1, 2, 7, 0)), rng.choice((1, 3)), rng.choice((0, 2))
    mode = rng.choice(("avg", "max", "avg", "bad" if rng.random() < 0.1 else "max"))
    aligned = rng.choice(("asymmetric", "half_pixel_for_nn", "half_pixel"))
    attrs = {"pooled_h": str(h), "pooled_w": str(w), "sampling_ratio": str(ratio),
             "spatial_scale": "1.0"}

    def build():
        args = [ov_param(feats), ov_param(rois), ov_param(indices, ov.Type.i32), h, w, ratio,
                1.0]
        if version == 15:
            return ov15.roi_align_rotated(*args, True)
        if version == 9:
            return ov9.roi_align(*args, mode, aligned)
        return ov3.roi_align(*args, mode)

    if version != 15:
        attrs["mode"] = mode
    if version == 9:
        attrs["aligned_mode"] = aligned
    op = "ROIAlignRotated" if version == 15 else "ROIAlign"
    return Case(build, op, version, [tensor(feats), tensor(rois), tensor(indices, "i32")],
                attrs, label=f"{feats} {rois} {indices} {attrs}")


def test_roi_pooling_infers_what_openvino_infers():
    agree_with_openvino("roi_pooling", roi_pooling_case, 1000)


def test_psroi_pooling_infers_what_openvino_infers():
    agree_with_openvino("psroi_pooling", psroi_pooling_case, 1000)


@pytest.mark.parametrize("version", [3, 9, 15])
def test_roi_align_infers_what_openvino_infers(version):
    agree_with_openvino(f"roi_align{version}", roi_align_case, 1000, version)
