"""Single gather-family ops on the OpenVINO CPU plugin.

Build an ``ov.Model`` holding one gather-family op per :class:`OpCase` (each op an
independent subgraph on its own Parameters), compile it once on the CPU and run it
(:func:`run_cases`): many layers, one compile. Whole IRs run in ``runtime.models`` on the
same compile settings (``core.cpu_config``).

Data and indices are always Parameters, never Constants: with constant inputs OpenVINO
folds the op at compile time with its core reference code, and the CPU plugin, which is
what is being validated, would never run.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError, UnsupportedOpError
from ..ops.core import registry
from ..ops.core.spec import OpSpec
from .core import compile_model, first_line, openvino, run_request, tensor_values

__all__ = [
    "OpCase",
    "OpRun",
    "build_model",
    "run_cases",
    "known_crash",
]

#: With fewer cases than this, run_cases compiles one model (no worker threads).
PARALLEL_MIN_CASES = 200


@dataclass
class OpCase:
    """One gather-family op with concrete inputs, to run on the CPU.

    ``data_shape``/``indices_shape`` are the partial shapes of the Parameters (text in
    OpenVINO's notation); None makes them static, the inputs' own shapes. ``axis`` is the
    Gather/GatherElements axis; Gather receives it as a Constant of ``axis_type``.
    ``indices_const`` makes the indices a Constant, as in an IR whose indices are a
    Const (OpenVINO's transformations then see them); the data stays a Parameter so
    that the op runs in the CPU plugin instead of being folded at compile time.
    """

    op_type: str
    version: int
    data: np.ndarray
    indices: np.ndarray
    batch_dims: int = 0
    axis: int = 0
    axis_type: str = "i64"
    data_shape: str | None = None
    indices_shape: str | None = None
    indices_const: bool = False
    label: str = ""


@dataclass
class OpRun:
    """What the runtime returned for one :class:`OpCase`.

    ``partial_shape`` is OpenVINO's output partial shape at build time (from the
    Parameters' partial shapes); ``output`` the computed tensor, or None with ``error``
    (and ``crashed`` when the runtime's process died on the case: ``worker``).
    """

    output: np.ndarray | None = None
    partial_shape: str | None = None
    error: str | None = None
    note: str | None = None
    #: the runtime's process died running this case alone (``error`` says how)
    crashed: bool = False


def _spec(case: OpCase) -> OpSpec:
    """The spec of the op ``case`` runs; RuntimeBridgeError when the bridge cannot build it."""
    try:
        spec = registry.spec(case.op_type, case.version)
    except UnsupportedOpError as err:
        raise RuntimeBridgeError(f"the runtime bridge cannot build {case.op_type}-"
                                 f"{case.version}: {err.message}") from err
    if spec.build is None:
        raise RuntimeBridgeError(f"the runtime bridge cannot build {spec.name}")
    return spec


def _op_node(case: OpCase, data: Any, indices: Any) -> Any:
    """The OpenVINO node for ``case`` on the two Parameter nodes (its spec builds it)."""
    return _spec(case).build(_opsets(), data, indices, case)


class _Opsets(dict):
    """``openvino.opsetN`` by N, each imported when a spec first builds from it."""

    def __missing__(self, number: int) -> Any:
        try:
            module = importlib.import_module(f"openvino.opset{int(number)}")
        except ImportError as err:
            raise RuntimeBridgeError(f"OpenVINO has no opset{number} ({err})") from err
        self[number] = module
        return module


@functools.cache
def _opsets() -> _Opsets:
    openvino()
    return _Opsets()


def _parameter(case_shape: str | None, array: np.ndarray) -> Any:
    """A Parameter of ``case_shape``, or of the array's static shape when that is None
    or of dynamic rank (the CPU plugin does not run dynamic-rank inputs)."""
    ov = openvino()
    if case_shape is None or case_shape.strip() in ("[...]", "..."):
        shape = ov.PartialShape(list(array.shape))
    else:
        shape = ov.PartialShape(case_shape)
    return _opsets()[1].parameter(shape, dtype=array.dtype)


def _partial_shape(case: OpCase, node: Any) -> str:
    """The op's output partial shape for the case's partial input shapes; built apart
    when an input has a dynamic rank (the compiled op then has static inputs)."""
    shapes = (case.data_shape, None if case.indices_const else case.indices_shape)
    if not any(s is not None and s.strip() in ("[...]", "...") for s in shapes):
        return str(node.get_output_partial_shape(0))
    ov, o1 = openvino(), _opsets()[1]
    data = o1.parameter(ov.PartialShape(case.data_shape or list(case.data.shape)),
                        dtype=case.data.dtype)
    if case.indices_const:
        indices = o1.constant(np.array(case.indices, order="C"))
    else:
        indices = o1.parameter(ov.PartialShape(case.indices_shape or list(case.indices.shape)),
                               dtype=case.indices.dtype)
    return str(_op_node(case, data, indices).get_output_partial_shape(0))


def build_model(cases: Sequence[OpCase]) -> tuple[Any, list[str], list[str | None]]:
    """One ``ov.Model`` with an independent subgraph per case; each op's output partial
    shape (for the case's partial input shapes); and a note per case that had to run on
    static shapes (the CPU plugin compiles no op whose output rank is dynamic)."""
    params, results, shapes, notes = [], [], [], []
    for case in cases:
        node, fed = _build_case(case)
        shapes.append(_partial_shape(case, node))
        note = None
        if node.get_output_partial_shape(0).rank.is_dynamic:
            node, fed = _build_case(replace(case, data_shape=None, indices_shape=None))
            note = ("ran on static input shapes: the CPU plugin compiles no op whose "
                    "output rank is dynamic")
        params += fed
        results.append(node.output(0))
        notes.append(note)
    return openvino().Model(results, params, "ovgather_validate"), shapes, notes


def _build_case(case: OpCase) -> tuple[Any, list[Any]]:
    """The op node of ``case`` and the Parameters it is fed through."""
    data = _parameter(case.data_shape, case.data)
    if case.indices_const:
        indices = _opsets()[1].constant(np.array(case.indices, order="C"))
        fed = [data]
    else:
        indices = _parameter(case.indices_shape, case.indices)
        fed = [data, indices]
    try:
        return _op_node(case, data, indices), fed
    except RuntimeError as err:
        raise RuntimeBridgeError(
            f"OpenVINO refused {case.op_type}-{case.version}: {first_line(err)}",
            layer_name=case.label or None,
        ) from err


def _infer(compiled: Any, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    request = run_request(compiled, inputs)
    return [np.array(tensor_values(request.get_output_tensor(i)), copy=True)
            for i in range(len(compiled.outputs))]


def _run_batch(cases: Sequence[OpCase], threads: int | None) -> list[OpRun]:
    model, shapes, notes = build_model(cases)
    compiled = compile_model(model, threads, screen=False)  # each case: known_crash
    inputs = [a for case in cases for a in _fed(case)]
    outputs = _infer(compiled, inputs)
    return [OpRun(out, shape, note=note)
            for out, shape, note in zip(outputs, shapes, notes, strict=True)]


def _fed(case: OpCase) -> tuple[np.ndarray, ...]:
    return (case.data,) if case.indices_const else (case.data, case.indices)


def known_crash(case: OpCase) -> str | None:
    """Why the CPU plugin would crash on ``case``, or None.

    The op's spec knows (``OpSpec.known_crash``: Gather-7/8 on some static shapes, found
    while validating). A case the bridge cannot build crashes nothing: its run says why.
    """
    try:
        crash = _spec(case).known_crash
    except RuntimeBridgeError:
        return None
    return None if crash is None else crash(case)


def _run_alone(case: OpCase, threads: int | None) -> OpRun:
    """Run one case; when the CPU plugin refuses the case's partial shapes (it does not
    compile an op whose output rank is dynamic), run it on static shapes instead."""
    try:
        return _run_batch([case], threads)[0]
    except RuntimeBridgeError as err:
        if case.data_shape is None and case.indices_shape is None:
            return OpRun(error=err.message)
        first = err
    static = replace(case, data_shape=None, indices_shape=None)
    try:
        run = _run_batch([static], threads)[0]
    except RuntimeBridgeError as err:
        return OpRun(error=err.message)
    run.partial_shape = build_model([case])[1][0]
    run.note = (f"ran on static input shapes: with the layer's partial shapes {first.message}")
    return run


def run_cases(
    cases: Sequence[OpCase],
    *,
    batch_size: int = 1000,
    threads: int | None = None,
    progress: Any = None,
    workers: int = 2,
) -> list[OpRun]:
    """Run every case on the CPU plugin, at most ``batch_size`` cases per compiled model.

    Compiling dominates the time and grows with the model, and OpenVINO compiles
    without holding the GIL: with ``workers`` > 1 and enough cases, the cases are split
    into that many models compiled and run side by side. A batch that fails to build,
    compile or run is split and retried, so one bad case costs its own result (an
    ``OpRun`` with ``error``), not its neighbours'. ``progress`` is called with the
    number of cases done after each batch.
    """
    runs: list[OpRun | None] = [None] * len(cases)
    todo = []
    for i, case in enumerate(cases):
        crash = known_crash(case)
        if crash:
            runs[i] = OpRun(error=crash)
        else:
            todo.append(i)
    if progress is not None and len(todo) < len(cases):
        progress(len(cases) - len(todo))
    size = max(1, int(batch_size))
    if workers > 1 and len(todo) >= PARALLEL_MIN_CASES:
        size = min(size, -(-len(todo) // workers))
    chunks = [todo[start : start + size] for start in range(0, len(todo), size)]

    def work(chunk: list[int]) -> list[int]:
        for i, run in zip(chunk, _run_split([cases[i] for i in chunk], threads), strict=True):
            runs[i] = run
        if progress is not None:
            progress(len(chunk))
        return chunk

    if workers > 1 and len(chunks) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(work, chunks))
    else:
        for chunk in chunks:
            work(chunk)
    return [run for run in runs if run is not None]


def _run_split(cases: Sequence[OpCase], threads: int | None) -> list[OpRun]:
    if len(cases) == 1:
        return [_run_alone(cases[0], threads)]
    try:
        return _run_batch(cases, threads)
    except RuntimeBridgeError:
        half = len(cases) // 2
        return _run_split(cases[:half], threads) + _run_split(cases[half:], threads)
