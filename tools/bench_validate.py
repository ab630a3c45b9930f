"""Benchmark ``ovgather validate`` and the NumPy GatherND reference against OpenVINO.

Prints, in one run:

1. validating 100 and 1,000 gather layers in batched compiles (``validate`` with
   ``batch_size=1000``: models of at most 250 layers, two compiled side by side while
   the main thread plans and judges) against one compile per layer (the same call with
   ``batch_size=1``; 100 layers measured, 1,000 extrapolated unless ``--full``);
2. the NumPy reference GatherND against the OpenVINO CPU plugin (pre-bound tensors,
   ``INFERENCE_NUM_THREADS=2``, f32) on four sizes, and against ``onnx.reference``:
   the same inputs, one warm-up call each, then the median of ``--repeat`` rounds,
   interleaved so that a busy moment of the (shared) machine hits every contender.

``gather_zoo(n, seed)`` builds the model used here and by tests/validate/test_validate.py: GatherND
5/8 with batch_dims 0-3, GatherElements on every axis, Gather-1/7/8 with batch_dims,
i32/i64 indices (some of them Consts), f32/f16/i32/u8 data, static, dynamic and
interval dims.

    python tools/bench_validate.py [--full] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset5 as o5
import openvino.opset6 as o6
import openvino.opset7 as o7
import openvino.opset8 as o8

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ovgather import reference  # noqa: E402
from ovgather.ops.core.inputs import random_indices  # noqa: E402
from ovgather.validate import gather_layers  # noqa: E402

DATA_TYPES = [np.float32, np.float16, np.int32, np.uint8]
INDEX_TYPES = [np.int32, np.int64]


# -- the model ----------------------------------------------------------------------------------
def _partial(rng: np.random.Generator, sizes: list[int], keep: tuple[int, ...] = ()) -> str:
    """Some dims dynamic (``?``), some intervals around the size, the others (and those
    at the positions in ``keep``) static."""
    dims = []
    for n, size in enumerate(sizes):
        roll = 1.0 if n in keep else rng.random()
        if roll < 0.2:
            dims.append("?")
        elif roll < 0.4:
            dims.append(f"{max(1, size - 1)}..{size + 2}")
        else:
            dims.append(str(size))
    return "[" + ",".join(dims) + "]"


def _layer(rng: np.random.Generator, j: int, params: list) -> ov.Node:
    kind = j % 4
    dtype = DATA_TYPES[(j // 4) % len(DATA_TYPES)]
    itype = INDEX_TYPES[(j // 2) % 2]
    const_indices = j % 5 == 4
    if kind in (0, 1):
        b = (j // 4) % 4
        rank = b + 1 + int(rng.integers(0, 2))
        k = int(rng.integers(1, rank - b + 1))
        dshape = [int(x) for x in rng.integers(2, 5, rank)]
        ishape = dshape[:b] + [int(x) for x in rng.integers(1, 4, int(rng.integers(0, 2)))] + [k]
        op = "GatherND"
    elif kind == 2:
        rank = 1 + (j // 4) % 4
        axis = (j // 16) % (2 * rank) - rank
        dshape = [int(x) for x in rng.integers(1, 5, rank)]
        ishape = list(dshape)
        ishape[axis] = int(rng.integers(1, 5))
        op = "GatherElements"
    else:
        version = (8, 8, 7, 1)[(j // 4) % 4]
        b = 0 if version == 1 else int(rng.integers(0, 3))
        rank = b + 1 + int(rng.integers(0, 2))
        axis = int(rng.integers(b, rank))
        dshape = [int(x) for x in rng.integers(2, 5, rank)]
        ishape = dshape[:b] + [int(x) for x in rng.integers(1, 4, int(rng.integers(0, 2)))]
        op = "Gather"
    data = o1.parameter(ov.PartialShape(_partial(rng, dshape)), dtype=dtype)
    data.set_friendly_name(f"data_{j}")
    params.append(data)
    if const_indices:  # all Consts i64: ovgather's reader refuses OpenVINO's byte sharing
        op_version = version if op == "Gather" else {"GatherND": 8, "GatherElements": 6}[op]
        values = random_indices(rng, op, op_version, dshape, ishape,
                                np.dtype(np.int64), b if op != "GatherElements" else 0,
                                axis if op != "GatherND" else 0, out_of_range=False)
        indices = o1.constant(values)
    else:
        keep = (len(ishape) - 1,) if op == "GatherND" and rng.random() < 0.9 else ()
        indices = o1.parameter(ov.PartialShape(_partial(rng, ishape, keep)), dtype=itype)
        indices.set_friendly_name(f"indices_{j}")
        params.append(indices)
    if op == "GatherND":
        node = (o5 if kind == 0 else o8).gather_nd(data, indices, b)
    elif op == "GatherElements":
        node = o6.gather_elements(data, indices, axis)
    else:
        axis_const = o1.constant(np.array(axis - (rank if j % 3 == 0 else 0), np.int64))
        node = {1: lambda: o1.gather(data, indices, axis_const),
                7: lambda: o7.gather(data, indices, axis_const, b),
                8: lambda: o8.gather(data, indices, axis_const, b)}[version]()
    node.set_friendly_name(f"{op}_{j}")
    return node


def gather_zoo(n_layers: int, seed: int = 0) -> ov.Model:
    """A model of ``n_layers`` independent gather layers (see the module docstring)."""
    rng = np.random.default_rng(seed)
    params: list = []
    outputs = [_layer(rng, j, params).output(0) for j in range(n_layers)]
    return ov.Model(outputs, params, f"gather_zoo_{n_layers}")


def save_zoo(n_layers: int, path: str | Path, seed: int = 0) -> Path:
    """Write ``gather_zoo`` as an IR at ``path`` (.xml and .bin)."""
    ov.save_model(gather_zoo(n_layers, seed), str(path), compress_to_fp16=False)
    return Path(path)


# -- timing helpers ---------------------------------------------------------------------------
def _round(fn: Callable[[], object], min_time: float) -> float:
    """Mean time per call of ``fn`` over one round of at least ``min_time`` seconds."""
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / n


def _interleaved(fns: list[Callable[[], object]], repeat: int,
                 min_time: float = 0.1) -> list[tuple[float, float]]:
    """(median, best) time per call of each function over ``repeat`` rounds, after one
    warm-up call each; the rounds interleaved, so that a busy moment of the machine hits
    them all alike. The best is what each gets from a quiet machine: OpenVINO's two
    threads suffer more than NumPy's one when the other core is busy."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for n, fn in enumerate(fns):
            times[n].append(_round(fn, min_time))
    return [(statistics.median(t), min(t)) for t in times]


# -- 1. batched vs one compile per layer ----------------------------------------------------------
def bench_validate(full: bool, rounds: int = 5) -> None:
    """Batched: the median of ``rounds`` runs. One compile per layer (the same
    ``validate`` with ``batch_size=1``, so the same worker threads): one run."""
    from ovgather.ir import read_ir
    from ovgather.validate import validate

    print(f"validate: batched compiles (median of {rounds} runs) vs one compile per layer")
    with tempfile.TemporaryDirectory() as tmp:
        validate(read_ir(save_zoo(8, Path(tmp) / "warm.xml")))  # start-up: openvino, CPU
        for n in (100, 1000):
            G = read_ir(save_zoo(n, Path(tmp) / f"zoo{n}.xml"))
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                report = validate(G, batch_size=1000)
                times.append(time.perf_counter() - start)
                assert report.ok, [lv.message for lv in report.problems()][:3]
            batched = statistics.median(times)
            sample = n if full or n == 100 else 100
            names = None if sample == n else [G.nodes[x]["name"] for x in
                                              gather_layers(G)[:sample]]
            start = time.perf_counter()
            single = validate(G, layers=names, batch_size=1)
            per_layer = (time.perf_counter() - start) * n / sample
            assert single.ok
            note = "" if sample == n else f" (measured on {sample}, scaled)"
            print(f"  {n:5d} layers: batched {batched:6.3f} s ({min(times):.3f}-{max(times):.3f}),"
                  f" one compile per layer {per_layer:6.2f} s{note}: "
                  f"{per_layer / batched:5.1f}x faster "
                  f"({report.summary['ok']} ok, {report.summary['skipped']} skipped)", flush=True)


# -- 2. the reference vs OpenVINO and onnx.reference ----------------------------------------------
SIZES = [
    ((64, 512, 64), (64, 256, 1), 1),
    ((8, 128, 128, 32), (8, 128, 500, 2), 1),
    ((100, 100, 100), (200000, 3), 0),
    ((30000, 256), (4096, 1), 0),
]


def _case(data_shape, indices_shape, b, negative: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(data_shape, dtype=np.float32)
    k = indices_shape[-1]
    columns = [rng.integers(-s if negative else 0, s, indices_shape[:-1])
               for s in data_shape[b:b + k]]
    return data, np.stack(columns, axis=-1).astype(np.int64)


def _openvino_gather_nd(data: np.ndarray, indices: np.ndarray, b: int):
    p = o1.parameter(data.shape, np.float32)
    q = o1.parameter(indices.shape, np.int64)
    model = ov.Model([o8.gather_nd(p, q, b)], [p, q])
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                      "INFERENCE_NUM_THREADS": 2})
    request = compiled.create_infer_request()
    request.set_input_tensor(0, ov.Tensor(data, shared_memory=True))
    request.set_input_tensor(1, ov.Tensor(indices, shared_memory=True))
    request.infer()
    return request, request.get_output_tensor(0).data


def _onnx_gather_nd(data: np.ndarray, indices: np.ndarray, b: int):
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("GatherND", ["d", "i"], ["o"], batch_dims=b)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("d", TensorProto.FLOAT, data.shape),
        helper.make_tensor_value_info("i", TensorProto.INT64, indices.shape)],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)])
    evaluator = ReferenceEvaluator(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13)]))
    return lambda: evaluator.run(None, {"d": data, "i": indices})[0]


def bench_reference(repeat: int) -> None:
    """Each size with indices in [0, s-1], then with negative ones too (onnx.reference
    only on the first: it is the slow one). The reference writes into a pre-allocated
    output as OpenVINO does into its pre-bound tensor; its time allocating the output is
    printed too, and onnx.reference (which always allocates) is compared with both."""
    print(f"reference GatherND-8 vs OpenVINO CPU (pre-bound tensors, 2 threads, f32) "
          f"and vs onnx.reference: medians of {repeat} interleaved rounds")
    for data_shape, indices_shape, b in SIZES:
        for negative in (False, True):
            data, indices = _case(data_shape, indices_shape, b, negative)
            request, ov_out = _openvino_gather_nd(data, indices, b)
            out = np.empty_like(ov_out)
            ours = reference.gather_nd(data, indices, b, out=out)
            assert np.array_equal(ours, ov_out), "reference and OpenVINO disagree"
            fns = [
                request.infer,
                lambda d=data, i=indices, b=b, o=out: reference.gather_nd(d, i, b, out=o),
                lambda d=data, i=indices, b=b: reference.gather_nd(d, i, b),
            ]
            if not negative:
                fns.append(_onnx_gather_nd(data, indices, b))
                assert np.array_equal(fns[-1](), ours), "onnx.reference disagrees"
            (t_ov, b_ov), (t_np, b_np), (t_new, _), *onnx = _interleaved(fns, repeat)
            line = (f"  data {list(data_shape)} indices {list(indices_shape)} b={b}"
                    f"{' (negative indices)' if negative else ''}: OpenVINO {t_ov * 1e3:.2f} ms,"
                    f" reference {t_np * 1e3:.2f} ms ({t_np / t_ov:4.2f}x OpenVINO, best vs "
                    f"best {b_np / b_ov:4.2f}x; {t_new * 1e3:.2f} ms allocating its output, "
                    f"{t_new / t_ov:4.2f}x)")
            if onnx:
                t_onnx = onnx[0][0]
                line += (f", onnx.reference {t_onnx * 1e3:.1f} ms ({t_onnx / t_np:3.0f}x "
                         f"slower; {t_onnx / t_new:3.0f}x than allocating)")
            print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true",
                        help="measure one compile per layer on all 1,000 layers too")
    parser.add_argument("--repeat", type=int, default=9,
                        help="timing rounds (the median is kept)")
    parser.add_argument("--skip-validate", action="store_true")
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args(argv)
    print(f"openvino {ov.__version__}, numpy {np.__version__}")
    if not args.skip_validate:
        bench_validate(args.full)
    if not args.skip_reference:
        bench_reference(args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
