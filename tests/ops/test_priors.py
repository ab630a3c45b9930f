"""PriorBox-1/8 and PriorBoxClustered-1 against OpenVINO: feature map sizes as constants
(-1 and wrong lengths too), parameters and value bounds, image sizes of several ranks, and
random sizes, aspect ratios (repeated, flipped), densities, fixed sizes and ratios."""

from __future__ import annotations

import openvino.opset1 as ov1
import openvino.opset8 as ov8
import pytest
from int_inputs import one_of, parameter
from op_diff import Case, agree_with_openvino

from ovgather.ops.priors import floats

OPS = {("PriorBox", 1): ov1.prior_box, ("PriorBox", 8): ov8.prior_box,
       ("PriorBoxClustered", 1): ov1.prior_box_clustered}


def _list(rng, values, most=3):
    return [rng.choice(values) for _ in range(rng.randint(0, most))]


def _text(values) -> str:
    return ",".join(repr(float(v)) for v in values)


def prior_box_case(rng, op: str, version: int) -> Case:
    sizes = [rng.choice((1, 2, 3, 5, 19, -1)) for _ in range(2 if rng.random() > 0.05 else 3)]
    size_build, size = one_of(rng, sizes, ("[2]", "[?]", "[...]", "[2,1]"), 2, 0.6)
    image_build, image = parameter(rng.choice(("[2]", "[2]", "[?]", "[...]", "[2,1]")))
    ov_attrs = {"offset": 0.5}
    if op == "PriorBoxClustered":
        ov_attrs |= {"width": _list(rng, (1.0, 2.0, 4.0), 4),
                     "height": _list(rng, (1.0, 2.0), 4)}
    else:
        ov_attrs |= {"min_size": _list(rng, (2.0, 4.0, 8.0)),
                     "max_size": _list(rng, (4.0, 16.0)),
                     "aspect_ratio": _list(rng, (2.0, 0.5, 3.0, 1.0 / 3.0, 1.0, 2.0000001), 4),
                     "flip": rng.random() < 0.5, "scale_all_sizes": rng.random() < 0.7,
                     "density": _list(rng, (1.0, 2.0, 2.5, 3.0), 2),
                     "fixed_size": _list(rng, (2.0, 3.0), 2) if rng.random() < 0.3 else [],
                     "fixed_ratio": _list(rng, (1.0, 2.0), 2) if rng.random() < 0.3 else []}
    attrs = {k: (_text(v) if isinstance(v, list) else str(v).lower())
             for k, v in ov_attrs.items()}
    return Case(lambda: OPS[op, version](size_build(), image_build(), ov_attrs), op, version,
                [size, image], attrs, label=f"{size!r} {image!r} {attrs}")


@pytest.mark.parametrize("op,version", list(OPS), ids=[f"{o}-{v}" for o, v in OPS])
def test_prior_boxes_infer_what_openvino_infers(op, version):
    agree_with_openvino(f"{op}{version}", prior_box_case, 1000, op, version)


def test_floats_reads_number_lists():
    assert floats({"a": "1,2.5, 3"}, "a") == [1.0, 2.5, 3.0] and floats({}, "a") == []
