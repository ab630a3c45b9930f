"""The value model: values computed in the element type OpenVINO computes them in.

Each test names one class of difference the differential value test
(``test_value_differential.py``) or a tester found, and builds its case with OpenVINO's own
builders. The value (or the shape it decides) is compared with OpenVINO: its ops'
``evaluate``, node by node, and ``read_model``'s shapes of the same IR.
"""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset13 as o
import pytest
from op_graphs import compare_with_openvino
from value_graphs import PACKED, Case, fold, same_bits

ZERO = o.constant(np.float32(0))


def _as_shape(v):
    """``v`` (any integer or real 1-D tensor) read as a shape: a Broadcast target."""
    return o3.broadcast(ZERO, o.convert(v, "i64"))


def _assert_shapes_like_openvino(tmp_path, *outputs) -> None:
    report, diffs = compare_with_openvino(tmp_path, list(outputs), [])
    assert diffs == []
    assert report.ok, [lr.to_dict() for lr in report.problems()]


def _outcomes(tmp_path, *outputs):
    cases = []
    for i, out in enumerate(outputs):
        out = out if isinstance(out, ov.Output) else out.output(0)
        out.get_node().set_friendly_name(f"case{i}")
        cases.append(Case(f"case{i}", [], out))
    outcomes, diffs = fold(cases, tmp_path / "values.xml")
    assert [d for d in diffs if d[4] != "ok"] == []
    return outcomes


def _assert_values_like_openvino(tmp_path, *outputs) -> None:
    """Each output's value in ovgather equals OpenVINO's evaluation bit for bit (and
    ovgather knows it)."""
    for r in _outcomes(tmp_path, *outputs):
        assert r.openvino is not None
        assert r.ovgather is not None, (r.case.name, r.openvino)
        assert same_bits(r.openvino, r.ovgather), (r.openvino.ravel(), r.ovgather.ravel())


def _assert_no_value_where_openvino_has_none(tmp_path, *outputs) -> None:
    for r in _outcomes(tmp_path, *outputs):
        assert r.openvino is None
        assert r.ovgather is None, r.ovgather


def f32(*values):
    return o.constant(np.array(values, np.float32))


def i64(*values):
    return o.constant(np.array(values, np.int64))


# -- element types ----------------------------------------------------------------------
def test_f32_products_round_to_float32(tmp_path) -> None:
    """``Ceiling(0.1f * 10f)`` is 1 in float32 (2 in float64)."""
    x = o.ceiling(o.multiply(f32(0.1), f32(10.0)))
    _assert_shapes_like_openvino(tmp_path, _as_shape(x))
    _assert_values_like_openvino(tmp_path, x)


def test_f32_sums_lose_what_float32_loses(tmp_path) -> None:
    """``16777216f + 1 + 1 - 16777216`` is 0 in float32."""
    x = o.subtract(o.add(o.add(f32(16777216.0), f32(1.0)), f32(1.0)), f32(16777216.0))
    _assert_shapes_like_openvino(tmp_path, _as_shape(o.add(x, f32(2.0))))
    _assert_values_like_openvino(tmp_path, x)


def test_i32_arithmetic_wraps(tmp_path) -> None:
    """``65536 * 65536 + 5`` is 5 in i32: a Reshape to ``[that, 8]`` is ``[5,8]``."""
    c = o.constant(np.array([65536], np.int32))
    rows = o.add(o.multiply(c, c), o.constant(np.array([5], np.int32)))
    target = o.concat([rows, o.constant(np.array([8], np.int32))], 0)
    data = o.constant(np.zeros(40, np.float32))
    _assert_shapes_like_openvino(tmp_path, o.reshape(data, target, False))
    _assert_values_like_openvino(tmp_path, rows)


def test_integers_converted_to_f32_are_reals(tmp_path) -> None:
    """A ReduceMean of ``Convert((1, 2), f32)`` is 1.5, not an integer mean of 1."""
    mean = o.reduce_mean(o.convert(i64(1, 2), "f32"), i64(0), True)
    _assert_shapes_like_openvino(tmp_path, _as_shape(o.multiply(mean, f32(2.0))))
    _assert_values_like_openvino(tmp_path, mean)


def test_a_real_value_is_not_answered_by_an_integer_one(tmp_path) -> None:
    """The rule memo takes ``(1, 2)`` of an integer branch and ``(1.0, 2.0)`` of f32 for
    two questions: the f32 branch after an integer one keeps its mean of 1.5."""
    converted = o.reduce_mean(o.convert(i64(1, 2), "f32"), i64(0), True)
    real = o.reduce_mean(f32(1.0, 2.0), i64(0), True)
    two = f32(2.0)
    _assert_shapes_like_openvino(tmp_path, _as_shape(o.multiply(converted, two)),
                                 _as_shape(o.multiply(real, two)))


def test_bf16_rounds_as_openvino_rounds(tmp_path) -> None:
    """OpenVINO rounds f32 to bf16 up only when the kept part is odd: 1 + 0.75 of a bf16
    step goes down, 1 + 1.5 steps goes up (a tie to even)."""
    step = 2.0 ** -7
    x = f32(1 + 0.75 * step, 1 + 1.5 * step, 2 + 0.75 * step, 3.0e38, 0.7615941559557649)
    as_bf16 = o.convert(x, "bf16")
    _assert_values_like_openvino(tmp_path, as_bf16, o.add(as_bf16, as_bf16))


def test_f16_ops_round_after_each_op(tmp_path) -> None:
    """A chain of f16 ops rounds to f16 after each op, as ``evaluate`` does node by node
    (ConstantFolding keeps such chains in f32; shapes are inferred node by node)."""
    x = o.constant(np.array([7.0, 2.5, 0.3], np.float16))
    _assert_values_like_openvino(tmp_path, o.cos(o.log(x)), o.add(o.exp(x), x))


def test_math_functions_round_as_the_c_library(tmp_path) -> None:
    """Sinh, Tan, Atan ... of f32 are the C library's float functions' results, which
    are not always the correctly rounded ones NumPy's double functions give."""
    rng = np.random.default_rng(7)
    x = o.constant((rng.standard_normal(200) * 4).astype(np.float32))
    outs = [fn(x) for fn in (o.sinh, o.cosh, o.tan, o.atan, o.asinh, o.tanh, o.sin, o.exp)]
    _assert_values_like_openvino(tmp_path, *outs, o.power(o.abs(x), f32(1.7)))


def test_integer_results_cast_as_cpp_casts(tmp_path) -> None:
    """Power of u32 computes in double and casts back as x86-64 code does (a result past
    the type keeps the low 32 bits of its int64)."""
    base = o.constant(np.array([3, 1000, 65535, 7], np.uint32))
    _assert_values_like_openvino(tmp_path, o.power(base, o.constant(np.array([5, 4, 3, 2],
                                                                              np.uint32))))


def test_integer_matmul_wraps(tmp_path) -> None:
    a = o.constant(np.array([[2**40, 3], [5, 2**62]], np.int64))
    _assert_values_like_openvino(tmp_path, o.matmul(a, a, False, False))


def test_types_openvino_does_not_evaluate_fold_nothing(tmp_path) -> None:
    """Subtract has no i16 evaluate, Gather no f64 one, Multiply no u8 one: their
    values stay unknown, and a shape read from them stays ``?``."""
    i16 = o.constant(np.array([5, 3], np.int16))
    outs = [o.subtract(i16, i16),
            o8_gather(o.constant(np.array([4.0, 2.0], np.float64))),
            o.multiply(o.constant(np.array([2, 3], np.uint8)),
                       o.constant(np.array([1, 1], np.uint8)))]
    _assert_no_value_where_openvino_has_none(tmp_path, *outs)
    _assert_shapes_like_openvino(tmp_path, *(_as_shape(x) for x in outs))


def o8_gather(x):
    import openvino.opset8 as o8
    return o8.gather(x, i64(1, 0), i64(0))


# -- attributes that change arithmetic --------------------------------------------------
def test_divide_without_pythondiv_truncates_toward_zero(tmp_path) -> None:
    """``m_pythondiv="false"``: -3 / 2 is -1, so ``Reshape(x[12], [2, -3/2])`` is [2,6]."""
    q = o1.divide(i64(-3), i64(2))
    q.set_attribute("m_pythondiv", False)
    target = o.concat([i64(2), q], 0)
    data = o.constant(np.zeros(12, np.float32))
    _assert_shapes_like_openvino(tmp_path, o.reshape(data, target, False))
    floor = o1.divide(i64(-7, 7, -9), i64(2, -2, 4))
    _assert_values_like_openvino(tmp_path, q, floor)


def test_floor_mod_as_openvino(tmp_path) -> None:
    """FloorMod takes the divisor's sign for integers; reals compute
    ``x - y * floor(x / y)`` in double (``1e20f mod 3.3f`` is 0, not fmod's 1.53)."""
    a = o.floor_mod(i64(-7, 7, -7, 2**40 + 3), i64(-2, -3, 3, 5))
    c = o.floor_mod(f32(1e20, 3.7, -5.5), f32(3.3, 0.1, 2.0))
    _assert_values_like_openvino(tmp_path, a, c)


def test_floor_mod_of_64_bit_integers_past_2_53_gives_no_value(tmp_path) -> None:
    """Past 2^53 OpenVINO's FloorMod evaluates through double, and its bounds (what a
    shape reads) give yet other values: ovgather gives none, and no shape."""
    big = o.floor_mod(i64(2**62 + 1, -(2**62 + 1)), i64(3, 3))
    assert _outcomes(tmp_path, big)[0].ovgather is None


def test_reduce_max_passes_over_nan_as_std_max(tmp_path) -> None:
    """ReduceMax keeps ``std::max(acc, x)``: a NaN after a number is passed over."""
    logs = o.log(o.constant(np.array([0.0, -1.0, 0.5], np.float16)))
    _assert_values_like_openvino(tmp_path, o.reduce_max(logs, i64(0), False),
                                 o.reduce_min(logs, i64(0), False))


def test_clamp_of_integers_with_min_above_max(tmp_path) -> None:
    """Clamp of integers to ``ceil(-2.5)..floor(-2.5)``: below -2 gives -2, else -3."""
    x = o.clamp(i64(-5, -2, 0, 4), -2.5, -2.5)
    _assert_values_like_openvino(tmp_path, x)


@pytest.mark.parametrize("dtype", (np.int64, np.uint64, np.int32, np.uint32))
def test_division_by_or_of_the_type_maximum_as_openvino_bounds_it(dtype, tmp_path) -> None:
    """OpenVINO's bounds read an integer type's maximum as "no bound": Divide and Mod
    give 0 there, in a shape."""
    top = np.iinfo(dtype).max
    a, b = o.constant(np.array([top, 5], dtype)), o.constant(np.array([3, 2], dtype))
    outs = [fn(x, y) for fn in (o.divide, o.mod, o.add, o.minimum)
            for x, y in ((a, b), (b, a))]
    _assert_shapes_like_openvino(tmp_path, *(_as_shape(o.minimum(o.maximum(
        o.convert(x, "i64"), i64(0)), i64(3))) for x in outs))


# -- packed types -----------------------------------------------------------------------
@pytest.mark.parametrize("etype", (*PACKED, "bf16"))
def test_packed_bytes_unpack_as_openvino_unpacks_them(etype: str) -> None:
    from ovgather.ops.core.numeric import unpack

    rng = random.Random(etype)
    for n in (1, 2, 3, 5, 8, 9, 13, 33):
        t = ov.Tensor(getattr(ov.Type, etype), ov.Shape([n]))
        raw = t.data.view(np.uint8).reshape(-1)
        raw[:] = np.array([rng.randrange(256) for _ in range(raw.size)], np.uint8)
        decoded = ov.Tensor(ov.Type.f32, ov.Shape([n]))
        assert o.convert(ov.op.Constant(t), "f32").evaluate([decoded], [t])
        mine = unpack(raw.copy(), etype, n).astype(np.float32)
        assert same_bits(decoded.data, mine), (n, decoded.data, mine)


@pytest.mark.parametrize("etype", ("u1", "u2", "u3", "u4", "u6", "i4", "nf4"))
def test_a_packed_const_converts_to_its_values(etype: str, tmp_path) -> None:
    """A packed Const's value is its unpacked elements, wherever a Convert reads it
    (read raw, a u4 ``[2,3,4,1]`` was taken for ``[50,20]``)."""
    values = {"u1": [1, 0, 1, 1], "u2": [2, 3, 1, 0], "i4": [2, -3, 4, 1],
              "nf4": [1.0, -1.0, 0.0, 1.0]}.get(etype, [2, 3, 4, 1])
    c = ov.op.Constant(getattr(ov.Type, etype), ov.Shape([4]), values)
    as_f32 = o.convert(c, "f32")
    _assert_values_like_openvino(tmp_path, as_f32)
    if etype != "nf4":
        _assert_shapes_like_openvino(tmp_path, _as_shape(o.abs(as_f32)))


def test_a_u4_broadcast_target_is_checked_without_a_crash(tmp_path) -> None:
    """A small u4 Const read as a shape: OpenVINO reads its packed bytes as they are (a
    ``[2,3,4,1]`` target gives ``[50,20,0,0]``), so ovgather gives ``?`` there, never
    another shape; ``check`` used to crash reading it."""
    c = ov.op.Constant(ov.Type.u4, ov.Shape([4]), [2, 3, 4, 1])
    model = ov.Model([o3.broadcast(ZERO, c)], [], "u4")
    path = tmp_path / "u4.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    run = subprocess.run([sys.executable, "-m", "ovgather", "check", str(path)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("etype", ("f8e4m3", "f8e5m2", "f4e2m1", "f8e8m0"))
def test_a_convert_from_f8_or_f4_reaches_no_shape(etype: str, tmp_path) -> None:
    """OpenVINO's bound evaluation does not convert the f8 and f4 types: a shape read
    through such a Convert stays ``?``."""
    c = ov.op.Constant(getattr(ov.Type, etype), ov.Shape([2]), [2.0, 4.0])
    _assert_shapes_like_openvino(tmp_path, _as_shape(o.convert(c, "f32")))


# -- found by the differential test -----------------------------------------------------
def test_relu_passes_negative_zero_and_nan(tmp_path) -> None:
    """Relu is ``x < 0 ? 0 : x``: -0.0 and NaN come out as they went in."""
    x = o.constant(np.array([-0.0, np.nan, -2.0, 3.5], np.float16))
    _assert_values_like_openvino(tmp_path, o.relu(x), o.relu(o.convert(x, "bf16")))


def test_sigmoid_of_reals_as_openvino(tmp_path) -> None:
    x = f32(-3.7, 0.0, 0.5, 9.0, -20.0)
    _assert_values_like_openvino(tmp_path, o.sigmoid(x), o.sigmoid(o.convert(x, "f16")))


def test_a_slice_with_a_negative_step_clamps_its_start_as_openvino(tmp_path) -> None:
    """``x[-2:-2:-2]`` of one element is that element in OpenVINO (the start clamps to
    0), not Python's empty slice."""
    import openvino.opset8 as o8
    x = o.reduce_max(o.constant(np.array([[-1, 126, 127, 5]], np.int64)), i64(1), False)
    cut = o8.slice(x, i64(-2), i64(-2), i64(-2))
    _assert_values_like_openvino(tmp_path, cut, o.concat([cut, i64(3, 6)], 0))
    _assert_shapes_like_openvino(tmp_path, _as_shape(o.concat([cut, i64(2)], 0)))


def test_strided_slice_values_clamp_their_ends_as_openvino(tmp_path) -> None:
    """Every begin, end, stride and mask on three elements: the value is OpenVINO's
    (``x[-5:-5:-1]`` is the first element there, not Python's empty slice)."""
    import itertools

    x = i64(4, 7, 9)
    outs = [o1.strided_slice(x, i64(b), i64(e), i64(s), [bm], [em])
            for b, e, s, bm, em in itertools.product((-5, -2, 0, 2, 4), (-5, -1, 0, 1, 5),
                                                    (1, 2, -1, -2), (0, 1), (0, 1))]
    _assert_values_like_openvino(tmp_path, *outs)


def test_the_memo_tells_zero_from_negative_zero(tmp_path) -> None:
    """``1 / 0.0`` is +inf and ``1 / -0.0`` is -inf: Python finds the two questions'
    values equal, the rule memo must not."""
    shapes = []
    for zero in (0.0, -0.0):
        inverse = o.divide(f32(1.0), f32(zero))
        pick = o.select(o.less(inverse, f32(0.0)), i64(3), i64(1))
        shapes.append(_as_shape(pick))
    _assert_shapes_like_openvino(tmp_path, *shapes)


def test_abs_of_negative_zero_is_zero(tmp_path) -> None:
    x = o.constant(np.array([-0.0, -2.5, 9.0], np.float16))
    _assert_values_like_openvino(tmp_path, o.abs(x), o.abs(o.convert(x, "f32")))


def test_real_matmul_sums_in_order(tmp_path) -> None:
    """MatMul of reals adds the products one by one in float32 (a BLAS's blocked or
    fused sums round otherwise where terms cancel)."""
    a = f32(10.0, 3.0, -3.0, 3.5, 9.0, 12.0)
    a = o.reshape(a, i64(2, 3), False)
    b = o.constant(np.array([[1e-3, 1.0, 7.0], [-3.7, 3.7, 2049.0], [3.0, -1.0, 65504.0]],
                            np.float32))
    _assert_values_like_openvino(tmp_path, o.matmul(a, b, False, False),
                                 o.matmul(b, a, True, True))


@pytest.mark.parametrize("dtype", (np.int32, np.int64, np.uint32, np.uint16))
def test_integers_converted_to_f16_as_openvino(dtype, tmp_path) -> None:
    """OpenVINO converts an i32 past f16's range to its largest value (65504), where
    other integers and reals past it become infinite."""
    top = np.iinfo(dtype).max
    x = o.constant(np.array([top - 1, 70000 % top, 65519, 65520, 7], dtype))
    _assert_values_like_openvino(tmp_path, o.convert(x, "f16"),
                                 o.convert(o.convert(x, "f32"), "f16"))


def test_boolean_values_convert_and_compute_as_integers(tmp_path) -> None:
    """A boolean Const converted to u8, then i64, feeds arithmetic (its values are 0
    and 1, not Python's True and False, which the integer rules refused)."""
    c = o.constant(np.array([True, True, False, False]))
    x = o.maximum(o.convert(o.convert(c, "u8"), "i64"), i64(0))
    _assert_shapes_like_openvino(tmp_path, _as_shape(x))
    _assert_values_like_openvino(tmp_path, x)


def test_a_convert_reads_only_the_elements_at_the_maximum_as_unbounded(tmp_path) -> None:
    """u64 ``[2^64-1, 2^64-2, 5]`` to i64: the maximum is "no bound" in OpenVINO's bounds,
    the other elements are cast (2^64-2 is -2), so ``max(x, 0)`` reads ``[?, 0, 5]``."""
    x = o.constant(np.array([2**64 - 1, 2**64 - 2, 5], np.uint64))
    target = o.minimum(o.maximum(o.convert(x, "i64"), i64(0)), i64(3))
    _assert_shapes_like_openvino(tmp_path, _as_shape(target))
