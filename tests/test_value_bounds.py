"""Shape arithmetic in real types: ShapeOf -> Convert(f32) -> Divide -> Floor/Ceiling ->
Convert(i64) -> Concat -> Reshape, as Swin's window partition and many exported models
compute their reshape targets. OpenVINO evaluates the bounds through every one of these
ops; so must ovgather, or the Reshape ends as ``[?,?,?,?,?,?]``. Each case is judged by
OpenVINO, layer by layer (``compare_with_openvino``)."""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import openvino.opset13 as o
import pytest
from test_ops_common import C, P, compare_with_openvino


def _window_partition(x, side: float, rounding, window: int):
    """``x [B, L, C]`` to ``[B, round(L / side), window, …]`` with the length computed in f32."""
    s = o.shape_of(x)
    length = o.convert(o.gather(s, C([1]), C(0)), ov.Type.f32)
    count = o.convert(rounding(o.divide(length, C([side], np.float32))), ov.Type.i64)
    target = o.concat([C([-1]), count, C([window]), o.gather(s, C([2]), C(0))], 0)
    return o.reshape(x, target, False)


def test_swin_window_partition_keeps_every_dim(tmp_path):
    x = P("[1,256,16]")
    s = o.shape_of(x)
    q = o.convert(o.floor(o.divide(o.convert(o.gather(s, C([1]), C(0)), ov.Type.f32),
                                   C([64.0], np.float32))), ov.Type.i64)
    r = o.reshape(x, o.concat([C([1]), q, C([4, 4, 4, 16])], 0), False)
    report, diffs = compare_with_openvino(tmp_path, [r], [x], "swin")
    assert diffs == []
    assert {lr.name: lr.inferred for lr in report.layers}[r.get_friendly_name()] == \
        ["[1,4,4,4,4,16]"]


@pytest.mark.parametrize("seed", range(36))
def test_real_shape_arithmetic_matches_openvino(tmp_path, seed):
    rng = random.Random(f"value_bounds-{seed}")
    window = rng.choice((2, 4, 8))
    lo = rng.choice((1, 2, 8))
    length = rng.choice((f"{window * 16}", f"{lo * window}..{window * 32}", "?", "..64"))
    x = P(f"[{rng.choice(('1', '?', '1..4'))},{length},{rng.choice((8, 16))}]")
    rounding = rng.choice((o.floor, o.ceiling, lambda node: node))  # Divide alone keeps bounds
    side = float(rng.choice((window, 2 * window, 4 * window)))  # a valid static reshape
    r = _window_partition(x, side, rounding, window)
    _, diffs = compare_with_openvino(tmp_path, [r], [x], f"arith{seed}")
    assert diffs == []


def test_a_real_range_has_the_length_openvino_gives(tmp_path):
    x = P("[?,6]")
    start = o.convert(o.gather(o.shape_of(x), C(1), C(0)), ov.Type.f32)
    r = o.range(C(0.5, np.float32), start, C(1.5, np.float32), ov.Type.f32)
    r2 = o.range(C(0.0, np.float32), C(7.0, np.float32), C(2.0, np.float32), ov.Type.f32)
    _, diffs = compare_with_openvino(tmp_path, [r, r2], [x], "real_range")
    assert diffs == []
