"""Proposal-1/4 and GenerateProposals-9 against OpenVINO, every output: seeded random
probabilities (scores), deltas, anchors and image infos (batches, anchors and sizes that
agree or clash, wrong ranks) and the post-NMS counts."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ov1
import openvino.opset4 as ov4
import openvino.opset9 as ov9
import pytest
from op_diff import Case, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import random_dim, random_shape
from shape_texts import near

ATTRS = {"base_size": np.uint32(16), "pre_nms_topn": np.uint32(100), "nms_thresh": 0.7,
         "feat_stride": np.uint32(16), "min_size": np.uint32(1), "ratio": [1.0], "scale": [1.0]}


def _like(rng, dims) -> str:
    if rng.random() < 0.08:
        return random_shape(rng)
    return "[" + ",".join(d if rng.random() < 0.85 else random_dim(rng) for d in dims) + "]"


def proposal_case(rng, version: int) -> Case:
    batch, anchors, h, w = rng.choice(("1", "2", "?")), rng.choice((1, 3)), "4", "5"
    probs = _like(rng, [batch, str(2 * anchors), h, w])
    deltas = _like(rng, [batch, str(4 * anchors), h, w])
    info = rng.choice(("[3]", "[4]", "[?]", "[...]", "[2]", "[3,1]"))
    top_n = rng.choice((1, 10, 300))
    attrs = dict(ATTRS, post_nms_topn=np.uint32(top_n))
    make = ov4.proposal if version == 4 else ov1.proposal
    return Case(lambda: make(ov_param(probs), ov_param(deltas), ov_param(info), attrs),
                "Proposal", version, [tensor(probs), tensor(deltas), tensor(info)],
                {"post_nms_topn": str(top_n)}, label=f"{probs} {deltas} {info} {top_n}")


@pytest.mark.parametrize("version", [1, 4])
def test_proposal_infers_what_openvino_infers(version):
    agree_on_every_output(f"proposal{version}", proposal_case, 1000, version)


def generate_proposals_case(rng) -> Case:
    n, a, h, w = rng.choice((1, 2, "?")), rng.choice((1, 3)), 4, 5
    shapes = [near(rng, [n, rng.choice((3, 4))]), near(rng, [h, w, a, 4]),
              near(rng, [n, 4 * a, h, w]), near(rng, [n, a, h, w])]
    count = rng.choice((1, 10, 300))
    return Case(lambda: ov9.generate_proposals(*[ov_param(s) for s in shapes], 0.0, 0.7, 100,
                                               count),
                "GenerateProposals", 9, [tensor(s) for s in shapes],
                {"post_nms_count": str(count)}, label=f"{shapes} {count}")


def test_generate_proposals_infers_what_openvino_infers():
    agree_on_every_output("generate_proposals", generate_proposals_case, 1000)
