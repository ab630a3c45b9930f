"""The CPU plugin as every runtime module uses it: ``openvino`` imported on first use (so
``import ovgather`` and ``ovgather check`` never pay for it), one ``Core``, the compile
settings, compiling and running with OpenVINO's errors as RuntimeBridgeError.

The CPU plugin computes in bf16 by default on this kind of CPU; every compile here sets
``INFERENCE_PRECISION_HINT`` to f32 so that float values can be compared with NumPy.

Some models end the process inside the plugin's compile, which no ``try`` can catch: every
compile here is screened first (:func:`compile_crash`) and refused with the reason.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError

__all__ = ["openvino", "core", "cpu_config", "compile_model", "compile_crash", "run_request",
           "first_line"]


@functools.cache
def openvino() -> Any:
    """The ``openvino`` module, imported on first use."""
    try:
        import openvino as ov
    except ImportError as err:  # pragma: no cover - openvino is a dependency
        raise RuntimeBridgeError(f"the OpenVINO runtime is not installed ({err})") from err
    return ov


@functools.cache
def core() -> Any:
    """The one ``openvino.Core`` of the process."""
    return openvino().Core()


def cpu_config(threads: int | None = None) -> dict[str, Any]:
    """CPU compile properties: f32 inference (not bf16), no snippets (they fuse
    element-wise chains, never gathers, and cost a third of the compile time of a
    thousand-layer model), and ``threads`` if given."""
    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": "f32", "SNIPPETS_MODE": "DISABLE"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = int(threads)
    return config


def first_line(err: BaseException) -> str:
    """The line of an OpenVINO error that says what failed (its ``Check`` line, if any)."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    checks = [ln for ln in lines if "Check" in ln or "exceed" in ln]
    return (checks or lines or [type(err).__name__])[-1]


def _constant_int(output: Any) -> int | None:
    node = output.get_node()
    if node.get_type_name() != "Constant":
        return None
    values = node.get_data().reshape(-1)
    return int(values[0]) if values.size == 1 else None


def compile_crash(model: Any) -> str | None:
    """Why compiling ``model`` would crash the process, or None.

    Found with OpenVINO 2026.4.1: a Gather (1, 7 or 8) whose data has a static dim of size
    0 anywhere but at its axis ends the compile with a floating point exception (SIGFPE):
    data [0,3,8] on axis 1, [3,0,8] on axis 0. The same Gather on dynamic dims compiles,
    and runs on such data.
    """
    for op in model.get_ordered_ops():
        if op.get_type_name() != "Gather" or op.get_input_size() < 3:
            continue
        data = op.input(0).get_partial_shape()
        if data.rank.is_dynamic:
            continue
        axis = _constant_int(op.input_value(2))
        rank = data.rank.get_length()
        if axis is not None and axis < 0:
            axis += rank
        if any(d.is_static and d.get_length() == 0 and i != axis for i, d in enumerate(data)):
            return (f"the CPU plugin of OpenVINO 2026.4.1 crashes (floating point exception) "
                    f"compiling a Gather whose data has a static dim of size 0 other than the "
                    f"axis: '{op.get_friendly_name()}' with data {data}")
    return None


def compile_model(model: Any, threads: int | None) -> Any:
    """``model`` compiled on the CPU with :func:`cpu_config`, unless it would crash the
    process (:func:`compile_crash`: a RuntimeBridgeError says why)."""
    crash = compile_crash(model)
    if crash is not None:
        raise RuntimeBridgeError(f"not compiled: {crash}")
    try:
        return core().compile_model(model, "CPU", cpu_config(threads))
    except RuntimeError as err:
        raise RuntimeBridgeError(f"the CPU plugin could not compile: {first_line(err)}") from err


def run_request(compiled: Any, inputs: Sequence[np.ndarray]) -> Any:
    """An infer request of ``compiled`` that has run on ``inputs`` (its outputs are ready)."""
    request = compiled.create_infer_request()
    ov = openvino()
    for i, array in enumerate(inputs):
        request.set_input_tensor(i, ov.Tensor(np.array(array, order="C", copy=None)))
    try:
        request.infer()
    except RuntimeError as err:
        raise RuntimeBridgeError(f"the CPU plugin failed to run: {first_line(err)}") from err
    return request
