"""The NumPy references agree with the OpenVINO CPU plugin, with onnx.reference and
onnxruntime (where ONNX defines the case), and with the spec examples.

Random cases are seeded; all the OpenVINO cases of one test run in one compiled model
(``runtime.run_cases``), so the differential tests stay fast.
"""

from __future__ import annotations

import numpy as np
import pytest

from ovgather import reference
from ovgather.ops.core.inputs import random_data, random_indices
from ovgather.ops.gather import gather_8_zeros_defined
from ovgather.runtime import OpCase, known_crash, run_cases

SEED = 20261122
DTYPES = ["float32", "float16", "int32", "uint8", "int8", "int64"]
ITYPES = ["int32", "int64"]


def _gather_nd_cases(rng: np.random.Generator, n: int) -> list[OpCase]:
    cases = []
    for i in range(n):
        version = (5, 8)[i % 2]
        b = int(rng.integers(0, 4))
        rank_d = b + int(rng.integers(1, 4))
        k = int(rng.integers(1, rank_d - b + 1))  # k = 0: the CPU plugin returns garbage
        dshape = [int(x) for x in rng.integers(1, 5, rank_d)]
        ishape = dshape[:b] + [int(x) for x in rng.integers(1, 4, int(rng.integers(0, 3)))] + [k]
        dtype, itype = np.dtype(DTYPES[i % len(DTYPES)]), np.dtype(ITYPES[(i // 2) % 2])
        data = random_data(rng, dshape, dtype)
        idx = random_indices(rng, "GatherND", version, dshape, ishape, itype, batch_dims=b)
        cases.append(OpCase("GatherND", version, data, idx, batch_dims=b))
    return cases


def _assert_runs_match(cases: list[OpCase], ref) -> None:
    runs = run_cases(cases)
    for case, run in zip(cases, runs, strict=True):
        if known_crash(case):  # a CPU plugin crash, not run (see runtime.known_crash)
            assert run.error == known_crash(case)
            continue
        assert run.error is None, run.error
        expected = ref(case)
        assert run.output.shape == expected.shape, (case.op_type, case.version, case.batch_dims)
        assert run.output.dtype == expected.dtype
        np.testing.assert_array_equal(run.output, expected)


def test_gather_nd_v5_v8_match_openvino_cpu_on_random_cases():
    rng = np.random.default_rng(SEED)
    cases = _gather_nd_cases(rng, 120)
    assert {c.batch_dims for c in cases} == {0, 1, 2, 3}
    assert any((c.indices < 0).any() for c in cases)
    _assert_runs_match(cases, lambda c: reference.gather_nd(c.data, c.indices, c.batch_dims,
                                                            c.version))


def test_gather_elements_matches_openvino_cpu_on_every_axis():
    rng = np.random.default_rng(SEED + 1)
    cases = []
    every_axis = [(r, a) for r in range(1, 5) for a in range(-r, r)] * 3
    for i, (rank, axis) in enumerate(every_axis):
        dshape = [int(x) for x in rng.integers(1, 5, rank)]
        ishape = list(dshape)
        ishape[axis] = int(rng.integers(1, 6))
        data = random_data(rng, dshape, np.dtype(DTYPES[i % len(DTYPES)]))
        idx = random_indices(rng, "GatherElements", 6, dshape, ishape,
                             np.dtype(ITYPES[i % 2]), axis=axis)
        cases.append(OpCase("GatherElements", 6, data, idx, axis=axis))
    assert {c.axis for c in cases} >= {-4, -3, -2, -1, 0, 1, 2, 3}
    _assert_runs_match(cases, lambda c: reference.gather_elements(c.data, c.indices, c.axis))


def test_gather_1_7_8_match_openvino_cpu_with_batch_dims_and_negative_axes():
    rng = np.random.default_rng(SEED + 2)
    cases = []
    for i in range(90):
        version = (1, 7, 8)[i % 3]
        rank_i = int(rng.integers(0, 4))
        b = 0 if version == 1 else int(rng.integers(0, rank_i + 1))
        rank_d = b + int(rng.integers(1, 3))
        axis = int(rng.integers(b, rank_d))
        dshape = [int(x) for x in rng.integers(1, 5, rank_d)]
        ishape = dshape[:b] + [int(x) for x in rng.integers(1, 4, rank_i - b)]
        if i % 4 == 0 and b:
            b -= rank_i  # negative batch_dims count from the indices rank
        if i % 5 == 0:
            axis -= rank_d
        data = random_data(rng, dshape, np.dtype(DTYPES[i % len(DTYPES)]))
        idx = random_indices(rng, "Gather", version, dshape, ishape,
                             np.dtype(ITYPES[i % 2]), axis=axis,
                             out_of_range=gather_8_zeros_defined(rank_d, data.dtype))
        if version != 8 and i % 2:  # what the CPU plugin does outside the spec: zeros
            idx = np.where(rng.random(idx.shape) < 0.3, -1, idx).astype(idx.dtype)
        cases.append(OpCase("Gather", version, data, idx, batch_dims=b, axis=axis,
                            axis_type=("i32", "i64")[i % 2]))
    _assert_runs_match(cases, lambda c: reference.gather(c.data, c.indices, c.axis,
                                                         c.batch_dims, c.version))


def test_gather_with_unit_batch_and_axis_at_batch_dims_runs_on_dynamic_shapes():
    # On static shapes the CPU plugin segfaults here; known_crash keeps it from running.
    data = np.arange(5, dtype=np.float32).reshape(1, 5)
    idx = np.array([[4, -1, 0]], np.int64)
    static = OpCase("Gather", 8, data, idx, batch_dims=1, axis=1)
    assert known_crash(static)
    dynamic = OpCase("Gather", 8, data, idx, batch_dims=1, axis=1, data_shape="[?,?]",
                     indices_shape="[?,?]")
    assert known_crash(dynamic) is None
    run = run_cases([static, dynamic])
    assert run[0].error and run[0].output is None
    np.testing.assert_array_equal(run[1].output, [[4, 4, 0]])
    np.testing.assert_array_equal(reference.gather(data, idx, 1, 1), [[4, 4, 0]])


def test_gather_8_out_of_range_gives_zeros_and_negative_counts_from_the_end():
    data = np.arange(1, 11, dtype=np.float32).reshape(2, 5)
    idx = np.array([0, -1, -5, -6, 5, 4], np.int64)
    expected = np.array([[1, 5, 1, 0, 0, 5], [6, 10, 6, 0, 0, 10]], np.float32)
    np.testing.assert_array_equal(reference.gather(data, idx, axis=1), expected)
    run = run_cases([OpCase("Gather", 8, data, idx, axis=1)])[0]
    np.testing.assert_array_equal(run.output, expected)
    # Gather-7 gives zeros for negative indices on the CPU plugin
    v7 = np.array([[1, 0, 0, 0, 0, 5], [6, 0, 0, 0, 0, 10]], np.float32)
    np.testing.assert_array_equal(reference.gather(data, idx, axis=1, version=7), v7)
    np.testing.assert_array_equal(run_cases([OpCase("Gather", 7, data, idx, axis=1)])[0].output,
                                  v7)


def test_gather_elements_out_of_range_is_refused_by_runtime_and_reference():
    data = np.zeros((2, 3), np.float32)
    idx = np.array([[0, 3, 1], [1, 1, 1]], np.int32)
    run = run_cases([OpCase("GatherElements", 6, data, idx, axis=1)])[0]
    assert run.error is not None and "exceed" in run.error
    with pytest.raises(IndexError):
        reference.gather_elements(data, idx, axis=1)


def test_gather_nd_with_empty_tuples_takes_whole_slices():
    # OpenVINO's shape rule accepts k = 0; the CPU plugin returns garbage for it, so
    # validation skips such layers; the reference gives what the formula says.
    data = np.arange(6).reshape(2, 3)
    out = reference.gather_nd(data, np.zeros((2, 2, 0), np.int64), batch_dims=1)
    np.testing.assert_array_equal(out, [[[0, 1, 2], [0, 1, 2]], [[3, 4, 5], [3, 4, 5]]])


def test_gather_nd_out_of_range_raises_instead_of_reading_stray_memory():
    data = np.zeros((4, 3))
    with pytest.raises(IndexError, match=r"\[-s, s-1\]"):
        reference.gather_nd(data, [[4]])
    with pytest.raises(IndexError):
        reference.gather_nd(data, [[0, -4]])
    with pytest.raises(ValueError, match="batch dims"):
        reference.gather_nd(np.zeros((2, 3)), np.zeros((3, 1), np.int64), batch_dims=1)


# -- the spec examples (expected outputs copied from the documents in seeds/) -----------------
GATHER_ND_8_SPEC = [
    ([[1, 2], [3, 4]], [[0, 0], [1, 0]], 0, [1, 3]),
    ([[1, 2], [3, 4]], [[1], [0]], 0, [[3, 4], [1, 2]]),
    ([[1, 2], [3, 4]], [[[1]], [[0]]], 0, [[[3, 4]], [[1, 2]]]),
    ([[1, 2], [3, 4]], [[1], [0]], 1, [2, 3]),
    (np.arange(1, 25).reshape(2, 3, 4), [[1], [0]], 1, [[5, 6, 7, 8], [13, 14, 15, 16]]),
    (np.arange(1, 25).reshape(2, 3, 4), [[[[1]], [[0]], [[2]]], [[[0]], [[2]], [[2]]]], 2,
     [[[2], [5], [11]], [[13], [19], [23]]]),
    (np.arange(1, 17).reshape(1, 2, 2, 4), [[[[1], [0]], [[3], [2]]]], 3, [[[2, 5], [12, 15]]]),
]


@pytest.mark.parametrize(("data", "indices", "b", "expected"), GATHER_ND_8_SPEC)
def test_gather_nd_8_spec_examples(data, indices, b, expected):
    np.testing.assert_array_equal(reference.gather_nd(np.array(data), indices, b), expected)


def test_gather_nd_5_folds_the_batch_dims_of_the_spec_example():
    data = np.arange(1, 25).reshape(2, 3, 4)
    indices = [[[[1]], [[0]], [[2]]], [[[0]], [[2]], [[2]]]]
    out = reference.gather_nd(data, indices, batch_dims=2, version=5)
    np.testing.assert_array_equal(out, [[2], [5], [11], [13], [19], [23]])


ONNX_GATHER_ND_SPEC = [  # seeds/001: the function-style gathernd examples 1-5
    ([[0, 1], [2, 3]], [[0, 0], [1, 1]], 0, [0, 3]),
    ([[0, 1], [2, 3]], [[1], [0]], 0, [[2, 3], [0, 1]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[0, 1], [1, 0]], 0, [[2, 3], [4, 5]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[[0, 1]], [[1, 0]]], 0, [[[2, 3]], [[4, 5]]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[1], [0]], 1, [[2, 3], [4, 5]]),
]


@pytest.mark.parametrize(("data", "indices", "b", "expected"), ONNX_GATHER_ND_SPEC)
def test_function_style_gathernd_examples(data, indices, b, expected):
    out = reference.gather_nd(np.array(data), np.array(indices, np.int64), batch_dims=b)
    np.testing.assert_array_equal(out, expected)


# -- onnx.reference and onnxruntime -----------------------------------------------------------


def _onnx_model(op: str, inputs: list[np.ndarray], opset: int, domain: str = "", **attrs):
    from onnx import helper, numpy_helper  # noqa: F401

    names = [f"x{i}" for i in range(len(inputs))]
    infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(names, inputs, strict=True)]
    node = helper.make_node(op, names, ["y"], domain=domain, **attrs)
    out = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(inputs[0].dtype),
                                        None)
    imports = [helper.make_opsetid("", opset if not domain else 13)]
    if domain:
        imports.append(helper.make_opsetid(domain, opset))
    return helper.make_model(helper.make_graph([node], "g", infos, [out]),
                             opset_imports=imports)


def _onnx_run(model, inputs):
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, {f"x{i}": a for i, a in enumerate(inputs)})[0]


def test_gather_nd_matches_onnx_reference_for_opsets_11_12_13():
    rng = np.random.default_rng(SEED + 3)
    for i, case in enumerate(_gather_nd_cases(rng, 45)):
        opset = (11, 12, 13)[i % 3]
        b = case.batch_dims if opset > 11 else 0
        if case.indices.shape[-1] == 0 or b != case.batch_dims:
            continue
        idx = case.indices.astype(np.int64)
        attrs = {"batch_dims": b} if opset > 11 else {}
        expected = _onnx_run(_onnx_model("GatherND", [case.data, idx], opset, **attrs),
                             [case.data, idx])
        out = reference.onnx_gather_nd(case.data, idx, b, opset=opset)
        np.testing.assert_array_equal(out, expected)


def test_com_microsoft_gather_nd_matches_onnxruntime():
    import onnxruntime as ort
    rng = np.random.default_rng(SEED + 4)
    for case in _gather_nd_cases(rng, 30):
        if case.batch_dims or case.indices.shape[-1] == 0 or case.data.dtype != np.float32:
            continue
        idx = case.indices.astype(np.int64)
        model = _onnx_model("GatherND", [case.data, idx], 1, domain="com.microsoft")
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        expected = sess.run(None, {"x0": case.data, "x1": idx})[0]
        out = reference.onnx_gather_nd(case.data, idx, opset=1, domain="com.microsoft")
        np.testing.assert_array_equal(out, expected)


def test_gather_elements_and_gather_match_onnx_reference():
    rng = np.random.default_rng(SEED + 5)
    for i in range(40):
        rank = int(rng.integers(1, 4))
        axis = int(rng.integers(-rank, rank))
        dshape = [int(x) for x in rng.integers(1, 5, rank)]
        ishape = list(dshape)
        ishape[axis] = int(rng.integers(1, 5))
        data = random_data(rng, dshape, np.dtype("float32"))
        idx = random_indices(rng, "GatherElements", 6, dshape, ishape, np.dtype("int64"),
                             axis=axis)
        opset = (11, 13)[i % 2]
        # onnx.reference mishandles a negative axis here; ONNX defines it as axis + rank
        expected = _onnx_run(_onnx_model("GatherElements", [data, idx], opset,
                                         axis=axis % rank), [data, idx])
        np.testing.assert_array_equal(reference.onnx_gather_elements(data, idx, axis, opset),
                                      expected)
        # ONNX Gather-13 = OpenVINO Gather-8 with in-range indices and batch_dims 0
        gidx = random_indices(rng, "Gather", 7, dshape, [3, 2], np.dtype("int64"), axis=axis)
        gidx = np.where(rng.random(gidx.shape) < 0.5, gidx - dshape[axis], gidx)
        expected = _onnx_run(_onnx_model("Gather", [data, gidx], 13, axis=axis), [data, gidx])
        np.testing.assert_array_equal(reference.gather(data, gidx, axis), expected)
