"""Models built to break f16 or bf16, each with its seeded inputs, the layers that are
its culprits and the precision-sensitive neighbours a fix may keep besides them."""

from __future__ import annotations

import numpy as np
import openvino as ov
from openvino import opset13 as op


def _named(node, name):
    node.set_friendly_name(name)
    return node


def _c(a):
    return op.constant(np.asarray(a, np.float32))


def sum_of_squares(rng):
    """f16: a sum of squares over 4096 values overflows; the norm divides by it."""
    x = op.parameter([1, 4096], np.float32, name="x")
    sq = _named(op.multiply(x, x), "square")
    s = _named(op.reduce_sum(sq, op.constant(np.array([1], np.int64)), True), "sumsq")
    n = _named(op.sqrt(s), "norm")
    y = _named(op.divide(x, n), "normalized")
    feeds = {"x": rng.normal(0, 8, (1, 4096)).astype(np.float32)}
    return ov.Model([op.result(y)], [x]), feeds, {"sumsq"}, {"norm"}


def feed_forward(rng):
    """f16: a feed-forward whose second MatMul's activations pass 65504."""
    x = op.parameter([1, 16, 64], np.float32, name="x")
    h = _named(op.matmul(x, _c(rng.normal(0, 30, (64, 256))), False, False), "up")
    h = _named(op.relu(h), "act")
    o = _named(op.matmul(h, _c(rng.normal(0, 30, (256, 64))), False, False), "down")
    y = _named(op.multiply(o, _c(1e-3)), "scale")
    feeds = {"x": rng.normal(0, 1, (1, 16, 64)).astype(np.float32)}
    return ov.Model([op.result(y)], [x]), feeds, {"down"}, {"scale", "act"}


def exp_logits(rng):
    """f16: exp of large logits (a softmax without its max taken away) that a MatMul reads
    before the sum divides it: the device keeps the Exp and its sum in f32, not the MatMul,
    which reads the exp rounded (Inf)."""
    x = op.parameter([1, 8, 32], np.float32, name="x")
    z = _named(op.multiply(x, _c(3.0)), "logits")
    e = _named(op.exp(z), "exp")
    s = _named(op.reduce_sum(e, op.constant(np.array([2], np.int64)), True), "denominator")
    a = _named(op.matmul(e, _c(rng.normal(0, 1, (32, 16))), False, False), "attend")
    y = _named(op.divide(a, s), "probs")
    feeds = {"x": rng.uniform(-4, 12, (1, 8, 32)).astype(np.float32)}
    return (ov.Model([op.result(y)], [x]), feeds, {"exp", "attend"},
            {"probs", "denominator", "logits"})


def inf_minus_inf(rng):
    """f16: two products that overflow, taken one from the other: Inf - Inf = NaN."""
    x = op.parameter([1, 64], np.float32, name="x")
    a = _named(op.multiply(x, _c(1000.0)), "big_a")
    b = _named(op.multiply(x, _c(999.0)), "big_b")
    y = _named(op.subtract(a, b), "difference")
    feeds = {"x": rng.uniform(70, 100, (1, 64)).astype(np.float32)}
    return ov.Model([op.result(y)], [x]), feeds, {"big_a", "big_b"}, {"difference"}


def variance(rng):
    """bf16: the variance of values around a large mean cancels."""
    x = op.parameter([1, 256], np.float32, name="x")
    axis = op.constant(np.array([1], np.int64))
    m = _named(op.reduce_mean(x, axis, True), "mean")
    d = _named(op.subtract(x, m), "centered")
    sq = _named(op.multiply(d, d), "squared")
    v = _named(op.reduce_mean(sq, axis, True), "variance")
    feeds = {"x": (1000 + rng.normal(0, 1, (1, 256))).astype(np.float32)}
    return ov.Model([op.result(v)], [x]), feeds, {"centered"}, {"mean", "squared", "variance"}


def cumulative(rng):
    """bf16: window sums as differences of a long cumulative sum."""
    x = op.parameter([1, 4096], np.float32, name="x")
    cs = _named(op.cumsum(x, op.constant(np.int64(1))), "cumsum")
    i64 = lambda v: op.constant(np.array(v, np.int64))  # noqa: E731
    hi = _named(op.slice(cs, i64([8]), i64([4096]), i64([1]), i64([1])), "ahead")
    lo = _named(op.slice(cs, i64([0]), i64([4088]), i64([1]), i64([1])), "behind")
    y = _named(op.subtract(hi, lo), "window")
    feeds = {"x": rng.uniform(0.5, 1.5, (1, 4096)).astype(np.float32)}
    return ov.Model([op.result(y)], [x]), feeds, {"window"}, {"cumsum"}


def rms_norm(rng, eps=1e-6):
    """A residual block and the RMS norm after it, between two MatMuls: OpenVINO's f16
    compression keeps the norm (its division by ``sqrt(mean + eps)``, eps at most f16's
    smallest normal), what it reads up to the MatMul and what it feeds down to the next
    MatMul in f32; with a larger eps, nothing. Returns the model and, by OpenVINO's rules
    (mark_subgraphs_to_keep_in_mixed_precision.cpp), the layers kept when eps is small."""
    x = op.parameter([1, 8, 64], np.float32, name="x")
    h = _named(op.matmul(x, _c(rng.normal(0, 0.1, (64, 64))), False, False), "attn")
    r = _named(op.add(x, h), "residual")
    sq = _named(op.power(r, _c(2.0)), "square")
    m = _named(op.reduce_mean(sq, op.constant(np.array([-1], np.int64)), True), "mean")
    a = _named(op.add(m, _c(eps)), "plus_eps")
    s = _named(op.sqrt(a), "root")
    d = _named(op.divide(r, s), "normed")
    g = _named(op.multiply(d, _c(rng.normal(1, 0.1, (64,)))), "gamma")
    y = _named(op.matmul(g, _c(rng.normal(0, 0.1, (64, 32))), False, False), "mlp")
    z = _named(op.relu(y), "act")
    model = ov.Model([op.result(z)], [x])
    return model, {"residual", "square", "mean", "plus_eps", "root", "normed", "gamma"}


#: (builder, target, the first non-finite layer or None)
CASES = {
    "sum_of_squares": (sum_of_squares, "f16", "sumsq"),
    "feed_forward": (feed_forward, "f16", "down"),
    "exp_logits": (exp_logits, "f16", "exp"),
    "inf_minus_inf": (inf_minus_inf, "f16", "big_a"),
    "variance": (variance, "bf16", None),
    "cumulative": (cumulative, "bf16", None),
}
