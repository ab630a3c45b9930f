"""ScaledDotProductAttention-13 against OpenVINO on seeded random shapes.

Query, key and value with batch dims that broadcast (or not), masks of rank 0 to 4,
scales of every shape, causal or not, 3 to 5 inputs; static, dynamic and interval dims
and dynamic ranks: the inferred text and the valid/invalid verdict must be OpenVINO's.
"""

from __future__ import annotations

import openvino.opset13 as ov13
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim

CASES = 2000


def _like(rng, dims):
    return [d if rng.random() < 0.75 else rng.choice(("1", "?", random_dim(rng))) for d in dims]


def _text(rng, dims):
    if rng.random() < 0.07:
        return "[...]"
    return "[" + ",".join(dims) + "]"


def sdpa_case(rng) -> Case:
    batch = [random_dim(rng) for _ in range(rng.choice((0, 1, 2, 2, 3)))]
    l_dim, s_dim, e_dim, ev_dim = (random_dim(rng) for _ in range(4))
    query = _text(rng, _like(rng, batch) + [l_dim, e_dim])
    key = _text(rng, _like(rng, batch)[rng.choice((0, 0, 1)):] + _like(rng, [s_dim, e_dim]))
    value = _text(rng, _like(rng, batch) + _like(rng, [s_dim]) + [ev_dim])
    shapes = [query, key, value]
    count = rng.choice((3, 4, 5))
    if count >= 4:
        rank = rng.choice((0, 1, 2, 2, 3, 4))
        mask = (_like(rng, batch) + _like(rng, [l_dim, s_dim]))[-rank:] if rank else []
        shapes.append(_text(rng, mask))
    if count == 5:
        shapes.append(rng.choice(("[]", "[1]", "[2]", "[?]", "[1,1]", "[...]", "[1..2]")))
    causal = rng.random() < 0.3

    def build():
        nodes = [ov_param(s) for s in shapes]
        return ov13.scaled_dot_product_attention(*nodes, causal=causal)

    return Case(build, "ScaledDotProductAttention", 13, [tensor(s) for s in shapes],
                {"causal": str(causal).lower()}, label=f"{shapes} causal={causal}")


def test_sdpa_infers_what_openvino_infers():
    agree_with_openvino("sdpa", sdpa_case, CASES)
