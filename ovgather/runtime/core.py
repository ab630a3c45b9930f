"""The CPU plugin as every runtime module uses it: ``openvino`` imported on first use (so
``import ovgather`` and ``ovgather check`` never pay for it), one ``Core``, the compile
settings, compiling and running with OpenVINO's errors as RuntimeBridgeError.

The CPU plugin computes in bf16 (or f16) by default on CPUs that have it; every compile here
sets ``INFERENCE_PRECISION_HINT`` to :data:`INFERENCE_PRECISION` (f32), so that float values
can be compared with NumPy and with the same model run elsewhere, and the reports say so.

Some models end the process inside the plugin's compile, which no ``try`` can catch: every
compile here is screened first (:func:`compile_crash`, asking the op specs) and refused
with the reason.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..element_types import numpy_dtype
from ..errors import RuntimeBridgeError, UnsupportedOpError
from ..ops.core import registry

__all__ = ["INFERENCE_PRECISION", "openvino", "core", "cpu_config", "compile_model",
           "compile_models",
           "tensor_values", "saturated", "I32_EDGES", "compile_crash", "input_tensor",
           "string_array", "run_request", "first_line"]

#: the inference precision of every compile of ovgather (:func:`cpu_config`), as OpenVINO
#: names it; what ``validate``, ``compare`` and the release checks report
INFERENCE_PRECISION = "f32"


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
    """CPU compile properties: f32 inference (:data:`INFERENCE_PRECISION`, not the bf16 or
    f16 the CPU plugin picks by default where the CPU has it), no snippets (they fuse
    element-wise chains, never gathers, and cost a third of the compile time of a
    thousand-layer model), and ``threads`` if given."""
    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": INFERENCE_PRECISION,
                              "SNIPPETS_MODE": "DISABLE"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = int(threads)
    return config


def first_line(err: BaseException) -> str:
    """The line of an OpenVINO error that says what failed (its ``Check`` line, if any)."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    checks = [ln for ln in lines if "Check" in ln or "exceed" in ln]
    return (checks or lines or [type(err).__name__])[-1]


def _shape(output: Any) -> tuple[int | None, ...] | None:
    shape = output.get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in shape)


def _scalar(output: Any) -> int | None:
    node = output.get_node()
    if node.get_type_name() != "Constant" or math.prod(output.get_shape()) != 1:
        return None  # a Constant of one element only: never read a big one's data
    values = node.get_data().reshape(-1)
    return int(values[0]) if values.size == 1 and values.dtype.kind in "iu" else None


def compile_crash(model: Any) -> str | None:
    """Why compiling ``model`` would end the process, or None: each op whose spec knows
    such a crash (``OpSpec.compile_crash``) is asked with its input shapes as the model
    has them."""
    for op in model.get_ordered_ops():
        try:
            spec = registry.find(op.get_type_name(), op.get_type_info().version_id)
        except UnsupportedOpError:
            continue
        if spec is None or spec.compile_crash is None:
            continue
        inputs = op.input_values()
        consts = {i: v for i, out in enumerate(inputs) if (v := _scalar(out)) is not None}
        crash = spec.compile_crash([_shape(out) for out in inputs], consts)
        if crash is not None:
            shapes = ", ".join(str(out.get_partial_shape()) for out in inputs)
            return f"{crash}: '{op.get_friendly_name()}' on {shapes}"
    return None


def compile_models(models: Sequence[Any], threads: int | None) -> list[Any]:
    """Each of ``models`` compiled as :func:`compile_model` compiles it, all at once: the
    CPU plugin compiles a model on one core, so two compile in the time of one on two
    cores. Each is screened first, in this thread; the threads then only call OpenVINO's
    compile, since Python reading a model beside another thread's compile (a constant's
    data, say) was seen to hang both. Per model its compiled model, or the
    RuntimeBridgeError that says why not (returned, not raised)."""
    from concurrent.futures import ThreadPoolExecutor

    out: list[Any] = []
    for model in models:
        crash = compile_crash(model)
        out.append(RuntimeBridgeError(f"not compiled: {crash}") if crash is not None else None)
    todo = [k for k, found in enumerate(out) if found is None]
    plugin = core()

    def one(model: Any) -> Any:
        try:
            return plugin.compile_model(model, "CPU", cpu_config(threads))
        except RuntimeError as err:
            return RuntimeBridgeError(f"the CPU plugin could not compile: {first_line(err)}")

    with ThreadPoolExecutor(max(1, len(todo))) as pool:
        for k, compiled in zip(todo, pool.map(one, [models[k] for k in todo]), strict=True):
            out[k] = compiled
    return out


def compile_model(model: Any, threads: int | None, *, screen: bool = True) -> Any:
    """``model`` compiled on the CPU with :func:`cpu_config`, unless it would crash the
    process (:func:`compile_crash`: a RuntimeBridgeError says why). ``screen=False`` for
    models whose ops were each screened already (single-op cases, by their spec's
    ``known_crash``): those compile on worker threads, where reading the model's
    constants from Python beside another thread's compile was seen to hang."""
    crash = compile_crash(model) if screen else None
    if crash is not None:
        raise RuntimeBridgeError(f"not compiled: {crash}")
    try:
        return core().compile_model(model, "CPU", cpu_config(threads))
    except RuntimeError as err:
        raise RuntimeBridgeError(f"the CPU plugin could not compile: {first_line(err)}") from err


def input_tensor(array: np.ndarray, etype: Any) -> Any:
    """``array`` as a tensor of the element type ``etype`` the compiled model asks for,
    which need not be the Parameter's: an IR v10 keeps f32 at an input declared f16, and
    NumPy holds no bf16, f8, f4, nf4 or packed sub-byte integer to make the array in.
    Types NumPy holds take the values converted; bf16 takes the f32 values cut to their
    upper half (its bits); strings take the array's own strings, or short ones written
    from its numbers (:func:`string_array`); the others take zero bits, a finite value
    in each of them (0, or -1 for nf4, 2^-127 for f8e8m0), as for integers a valid
    index."""
    ov, name = openvino(), etype.get_type_name()
    if name == "string":
        return ov.Tensor(string_array(array))
    dtype = numpy_dtype(name) if etype.is_static() else None
    if dtype is not None or not etype.is_static():
        return ov.Tensor(np.array(array, dtype=dtype, order="C", copy=None))
    tensor = ov.Tensor(etype, list(np.shape(array)))
    if name == "bf16":
        bits = np.asarray(array, dtype=np.float32).view(np.uint32) >> 16
        tensor.data.view(np.uint16)[...] = bits.astype(np.uint16)
    else:
        tensor.data.view(np.uint8)[...] = 0
    return tensor


def string_array(array: Any) -> np.ndarray:
    """``array`` as NumPy strings for a ``string`` input: strings (or bytes, read as
    UTF-8) as they are; numbers written out (``0``, ``-0.4313``), so that the inputs a
    command makes for a string tensor (zeros, random numbers) are short strings, never
    empty, that differ where the numbers do.

    >>> string_array(np.array([[0.0, -0.5], [3.0, 1e-9]])).tolist()
    [['0', '-0.5'], ['3', '1e-09']]
    """
    a = np.asarray(array)
    if a.dtype.kind == "U":
        return np.ascontiguousarray(a)
    if a.dtype.kind == "S":
        return np.char.decode(a, "utf-8", "replace")
    if a.dtype.kind == "f":
        return np.char.mod("%.6g", a).astype(str)
    if a.dtype.kind == "b":
        return np.where(a, "1", "0")
    if a.dtype.kind in "iu":
        return a.astype(str)
    return np.vectorize(str, otypes=[str])(a) if a.size else a.astype(str)


#: The edges of the i32 range: the CPU plugin computes i64 in i32, saturating there.
I32_EDGES = (2**31 - 1, -2**31)


def saturated(x: np.ndarray, y: np.ndarray, names: tuple[str, str] = ("A", "B"),
              past: bool = False) -> str | None:
    """Why two int64 tensors prove nothing, or None: a value at an edge of the i32 range
    (the CPU plugin computes i64 in i32, saturating: the true values may differ); with
    ``past``, a value beyond the range too (a reference computed in int64: the runtime's
    value cannot come out right). Two runtime outputs beyond the range are real values:
    the plugin computed that op in int64.

    >>> saturated(np.array([1, 2**31 - 1]), np.array([1, 2**31 - 1]))[:30]
    'an int64 value reaches the i32'
    """
    for which, v in zip(names, (x, y), strict=True):
        if v.dtype != np.int64:
            continue
        flat = v.reshape(-1)
        for start in range(0, flat.size, 1 << 20):
            chunk = flat[start:start + (1 << 20)]
            hit = ((chunk >= I32_EDGES[0]) | (chunk <= I32_EDGES[1]) if past
                   else np.isin(chunk, I32_EDGES))
            if hit.any():
                return (f"an int64 value reaches the i32 range's edge ({int(chunk[hit][0])} "
                        f"in {which}): the CPU plugin computes i64 in i32, saturating, so "
                        "the true values may differ")
    return None


def tensor_values(tensor: Any) -> np.ndarray:
    """A tensor's elements as NumPy holds them: strings as an array of ``str`` (``.data``
    of a string tensor is its raw bytes, garbage for a reader of values)."""
    if tensor.get_element_type().get_type_name() == "string":
        return np.array(tensor.str_data, dtype=object).reshape(tuple(tensor.shape))
    return tensor.data


def run_request(compiled: Any, inputs: Sequence[np.ndarray],
                states: Mapping[str, np.ndarray] | None = None) -> Any:
    """An infer request of ``compiled`` that has run on ``inputs`` (its outputs are ready),
    each made a tensor of the element type the compiled model asks for (:func:`input_tensor`).
    ``states``: the value each variable (by ``variable_id``) holds before the run, as a
    later call finds it (a cache of some past length), instead of its initial value."""
    try:  # an input of dynamic element type compiles, but no request can be made for it
        request = compiled.create_infer_request()
        ports = compiled.inputs  # a new list at each call: taken once
        for i, array in enumerate(inputs):
            request.set_input_tensor(i, input_tensor(array, ports[i].get_element_type()))
        if states:  # the arrays are made in the variable's type; its initial value is
            # never read (the CPU plugin refuses to make one for a variable of 1.. dims)
            ov = openvino()
            for state in request.query_state():
                if state.name in states:
                    state.state = ov.Tensor(np.ascontiguousarray(states[state.name]))
        request.start_async()  # infer() would copy every output into NumPy: they are read
        request.wait()  # from the request instead (no copies, no warning for strings)
    except RuntimeError as err:
        raise RuntimeBridgeError(f"the CPU plugin failed to run: {first_line(err)}") from err
    return request
