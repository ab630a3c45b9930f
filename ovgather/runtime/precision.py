"""Half precision on any CPU: a model run with every float tensor rounded to f16 or bf16
(``precision``'s simulation), the same model compiled natively at a lower inference
precision, and the rt_info marks that keep a layer in f32.

**Rounding.** The CPU plugin removes a ``Convert(f32->f16) -> Convert(f16->f32)`` pair
(and runs f16 layers in f32 on a CPU without f16), so the rounding is arithmetic, in f32,
which the plugin keeps: Veltkamp's split ``c = x * (2^s + 1); hi = c - (c - x)`` rounds
``x`` to nearest-even at the target's significand (11 bits for f16, ``s = 13``; 8 for
bf16, ``s = 16``). f16 adds its range: ``|x| >= 65520`` becomes ``±Inf`` (overflow as
IEEE f16 does), and below ``2^-14`` the value is rounded to a multiple of ``2^-24``
(subnormals) by adding and taking away ``max(|x|, 0.75)`` (not a constant: the plugin
folds an add and subtract of one constant). bf16 keeps f32's range. Every value of both
matches NumPy's f16 cast and bf16's round-to-nearest-even on the upper 16 bits bit for
bit, NaN and ±Inf included (tests/debug/test_precision.py).

**The probe.** One model holds the exact f32 chain (the model as read), a simulated copy
(rounding after each float layer output that a layer in the target precision reads) and,
with ``local``, a copy of every layer fed its exact inputs rounded (the layer alone in the
target precision; an input past f16's range saturates: it is its producer's error).
Each layer output's errors are reduced inside the model (largest absolute and relative
error, the sums of a cosine, non-finite counts), so one compile and one run give them all
as a single small vector.

A layer named in ``kept`` runs in f32: its output is rounded only for a consumer that is
not kept (where the device converts back to the target type), and it reads its inputs as
they come (rounded when their producer is not kept).

**Constants.** A layer in the target precision reads its f32 constants as the device
stores them: rounded, and for f16 clamped to ±65504 first, as OpenVINO's conversion of
constants saturates (an additive attention mask of f32's lowest value stays finite).
Weights an IR already stores in f16 round to themselves.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError
from ..ops.core import registry
from .core import compile_model, core, first_line, openvino, run_request

__all__ = ["TARGETS", "STAT_FIELDS", "probe_in_child", "stats", "simulate_in_child",
           "feed_in_order",
           "native_in_child", "native_bf16", "read_marks", "round_array", "mark_value",
           "rounded"]

#: The precisions simulated.
TARGETS = ("f16", "bf16")
#: The numbers of one comparison (a layer output against its exact f32 value).
STAT_FIELDS = ("max_abs", "max_rel", "dot", "aa", "bb", "bad_a", "bad_b", "peak_b")
#: Layers neither rounded nor copied: the model's edges, state and quantized layers.
SKIP = ("Parameter", "Result", "Constant", "ReadValue", "Assign", "FakeQuantize")
#: Data movement: its values are its input's, never rounded again (OpenVINO's f16
#: compression runs it in the precision of what feeds it).
MOVES = frozenset(("Reshape", "Squeeze", "Unsqueeze", "Transpose", "Slice", "StridedSlice",
                   "Concat", "Split", "VariadicSplit", "Broadcast", "Tile", "ShuffleChannels",
                   "DepthToSpace", "SpaceToDepth", "Identity", *registry.family("gather")))


def round_array(a: np.ndarray, target: str) -> np.ndarray:
    """The NumPy reference of the rounding (f32 in, f32 out)."""
    a = np.asarray(a, np.float32)
    if target == "f16":
        with np.errstate(over="ignore"):
            return a.astype(np.float16).astype(np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, r)


def mark_value(target: str) -> str:
    """The ``value`` of a ``DisablePrecisionConversion`` mark for ``target``."""
    return f"dynamic:{target}"


def _c(value: float) -> Any:
    from openvino import opset13 as op

    return op.constant(np.float32(value))


def rounded(x: Any, target: str) -> Any:
    """``x`` (an f32 output) rounded to ``target`` and back, in f32 ops the plugin keeps."""
    from openvino import opset13 as op

    s = 13 if target == "f16" else 16
    k = op.multiply(x, _c(2.0 ** s + 1))
    hi = op.subtract(k, op.subtract(k, x))
    ax = op.abs(x)
    if target == "bf16":  # c overflows near f32's top: leave those (and ±Inf) as they are
        return op.select(op.greater_equal(ax, _c(2.0 ** 112)), x, hi).output(0)
    m = op.maximum(ax, _c(0.75))
    small = op.subtract(op.add(x, m), m)
    y = op.select(op.less(ax, _c(2.0 ** -14)), small, hi)
    return op.select(op.greater_equal(ax, _c(65520.0)), op.multiply(x, _c(np.inf)),
                     y).output(0)


#: f16's largest finite value: a constant converted to f16 is clamped to it (OpenVINO's
#: ConvertFP32ToFP16 turns f32's lowest, the usual additive mask, into -65504, not -Inf).
F16_MAX = 65504.0


def stored(x: Any, target: str) -> Any:
    """A constant ``x`` (f32) as the device stores it in ``target``: rounded, and for f16
    clamped to its finite range first (constants saturate where computed values overflow)."""
    from openvino import opset13 as op

    if target == "f16":
        x = op.clamp(x, -F16_MAX, F16_MAX).output(0)
    return rounded(x, target)


def _stored_inputs(n: Any, const: set[Any], cache: dict[Any, Any], target: str) -> None:
    """Feed the layer ``n`` (in the target precision) its f32 constant inputs as stored."""
    f32 = openvino().Type.f32
    for i, v in enumerate(n.input_values()):
        if v.get_node() not in const or v.get_element_type() != f32:
            continue
        key = (v.get_node(), v.get_index())
        if key not in cache:
            cache[key] = stored(v, target)
        n.input(i).replace_source_output(cache[key])


def stats(a: np.ndarray, b: np.ndarray, limit: float | None = None) -> np.ndarray:
    """``a`` against the exact ``b``: the :data:`STAT_FIELDS` vector (float64). With
    ``limit`` (the target's largest finite value), an exact value past it that ``a``
    meets at or past it with the same sign counts as equal: no value of the target holds
    it (an additive mask of f32's lowest value), and an overflow to ±Inf is counted as
    non-finite all the same."""
    a = np.asarray(a, np.float64).reshape(-1)
    b = np.asarray(b, np.float64).reshape(-1)
    if a.size == 0 or a.shape != b.shape:
        return np.zeros(len(STAT_FIELDS))
    with np.errstate(all="ignore"):
        d = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))
        d = np.where(np.isinf(a) & (a == b), 0.0, d)
        if limit is not None:
            d = np.where((np.abs(b) > limit) & (np.abs(a) >= limit)
                         & (np.sign(a) == np.sign(b)), 0.0, d)
        ab = np.abs(b)
        rel = np.where((d == 0) | (ab == 0), 0.0, d / ab)
        fa, fb = np.isfinite(a), np.isfinite(b)
        both = fa & fb
        return np.array([np.max(d), np.max(rel), np.sum(a[both] * b[both]),
                         np.sum(a[both] ** 2), np.sum(b[both] ** 2),
                         a.size - np.count_nonzero(fa), b.size - np.count_nonzero(fb),
                         np.max(np.where(fb, ab, 0.0))])


def _constant_ops(model: Any) -> set[Any]:
    """Constants and what only constants feed (the decompression of weights)."""
    out: set[Any] = set()
    for n in model.get_ordered_ops():
        ins = [v.get_node() for v in n.input_values()]
        if n.get_type_name() == "Constant" or (ins and all(i in out for i in ins)
                                                and n.get_type_name() not in SKIP):
            out.add(n)
    return out


def _layers(model: Any) -> tuple[list[Any], set[Any]]:
    """The ops that are rounded: not skipped, not constant, not fed by a FakeQuantize
    (quantized layers are left alone), with an f32 output."""
    const = _constant_ops(model)
    f32 = openvino().Type.f32
    out = []
    for n in model.get_ordered_ops():
        kind = n.get_type_name()
        if kind in SKIP or kind in MOVES or n in const:
            continue
        if any(v.get_node().get_type_name() == "FakeQuantize" for v in n.input_values()):
            continue
        if any(n.output(k).get_element_type() == f32 for k in range(n.get_output_size())):
            out.append(n)
    return out, const


def _twin(original: Any, copy: Any) -> dict[Any, Any]:
    """Each op of ``original`` -> its counterpart in ``copy`` (a clone: same order)."""
    a, b = original.get_ordered_ops(), copy.get_ordered_ops()
    if len(a) == len(b) and all(x.get_friendly_name() == y.get_friendly_name()
                                for x, y in zip(a, b, strict=True)):
        return dict(zip(a, b, strict=True))
    by_name = {y.get_friendly_name(): y for y in b}
    return {x: by_name[x.get_friendly_name()] for x in a if x.get_friendly_name() in by_name}


def _effective(model: Any, kept: set[str], layers: Sequence[Any]) -> set[Any]:
    """The ops whose f32 outputs are exact: the Parameters (f32 as fed), the layers
    named in ``kept``, and data movement whose every non-constant input is exact."""
    const = _constant_ops(model)
    out: set[Any] = set(model.get_parameters())
    mine = {n for n in layers if n.get_friendly_name() in kept}
    for n in model.get_ordered_ops():
        if n in mine:
            out.add(n)
        elif n.get_type_name() in MOVES:
            srcs = [v.get_node() for v in n.input_values() if v.get_node() not in const]
            if srcs and all(v in out for v in srcs):
                out.add(n)
    return out


def _simulate(model: Any, target: str, kept: set[str]) -> tuple[Any, dict[Any, Any]]:
    """A rounded copy of ``model`` fed by ``model``'s Parameters; its op for each op.

    An exact output (:func:`_effective`) is rounded for each consumer that is a layer in
    the target precision; any other layer's output is rounded once, for all its
    consumers. Data movement is not rounded (its values are its input's)."""
    copy = model.clone()
    twin = _twin(model, copy)
    layers, _ = _layers(copy)
    exact = _effective(copy, kept, layers)
    rounds = set(layers)
    f32 = openvino().Type.f32
    for p_m in model.get_parameters():
        src, r = p_m.output(0), None
        for t in list(twin[p_m].output(0).get_target_inputs()):
            if t.get_node() in exact or src.get_element_type() != f32:
                t.replace_source_output(src)
                continue
            r = r if r is not None else rounded(src, target)
            t.replace_source_output(r)
    for n in copy.get_ordered_ops():
        if n.get_type_name() == "Parameter" or (n not in exact and n not in rounds):
            continue
        for k in range(n.get_output_size()):
            out = n.output(k)
            if out.get_element_type() != f32:
                continue
            targets = list(out.get_target_inputs())
            if n in exact:  # rounded where a layer in the target precision reads it
                targets = [t for t in targets if t.get_node() not in exact
                           and t.get_node().get_type_name() != "Result"]
            if not targets:
                continue
            r = rounded(out, target)
            for t in targets:
                t.replace_source_output(r)
    const, stored_consts = _constant_ops(copy), {}
    for n in rounds - exact:
        _stored_inputs(n, const, stored_consts, target)
    return copy, twin


def feed_in_order(params: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The arrays of ``feeds`` (by a Parameter's friendly or tensor name) in the order of
    ``params`` (an ``openvino.Model``'s Parameters); a Parameter not fed is an error."""
    out = []
    for p in params:
        names = [p.get_friendly_name(), *sorted(p.output(0).get_names())]
        found = [feeds[n] for n in names if n in feeds]
        if not found:
            raise RuntimeBridgeError(f"input '{p.get_friendly_name()}' is not fed")
        out.append(np.asarray(found[0]))
    return out


def _run(model: Any, feeds: Mapping[str, np.ndarray], results: Sequence[Any]
         ) -> list[np.ndarray]:
    from openvino import opset13 as op

    ov = openvino()
    probe = ov.Model([op.result(r) for r in results], list(model.get_parameters()), "probe")
    try:
        compiled = compile_model(probe, None)  # f32 (INFERENCE_PRECISION_HINT)
    except RuntimeError as err:
        raise RuntimeBridgeError(f"the CPU plugin could not compile: {first_line(err)}") \
            from err
    request = run_request(compiled, feed_in_order(model.get_parameters(), feeds))
    return [np.array(request.get_output_tensor(k).data) for k in range(len(results))]


def probe_in_child(xml: str, feeds: Mapping[str, np.ndarray], target: str,
                   kept: Iterable[str] = (), local: bool = True
                   ) -> tuple[list[tuple[str, int, str]], np.ndarray, np.ndarray | None]:
    """In the worker: every rounded layer output of ``xml`` as ``(friendly name, port,
    type)``, and per output the :data:`STAT_FIELDS` of the simulated model (rows) and,
    with ``local``, of the layer alone in ``target`` on its exact inputs."""
    from .models import read_model

    model = read_model(xml)
    kept = set(kept)
    sim, twin = _simulate(model, target, kept)
    layers, const = _layers(model)
    f32 = openvino().Type.f32
    entries, wanted = [], []
    if local:
        lone = model.clone()
        ltwin = _twin(model, lone)
        lone_const, lone_stored = _constant_ops(lone), {}
    for n in layers:
        outs = [k for k in range(n.get_output_size()) if n.output(k).get_element_type() == f32]
        if local:
            c = ltwin[n]
            for i, v in enumerate(n.input_values()):
                src = v.get_node()
                if src in const:
                    continue
                exact = src.output(v.get_index())
                # saturated: an input past the target's range is its producer's error
                c.input(i).replace_source_output(
                    stored(exact, target) if exact.get_element_type() == f32 else exact)
            _stored_inputs(c, lone_const, lone_stored, target)
        for k in outs:
            entries.append((n.get_friendly_name(), k, n.get_type_name()))
            sim = twin[n].output(k)  # as its consumers in the target precision read it
            wanted += [n.output(k), rounded(sim, target)]
            if local:
                wanted.append(rounded(ltwin[n].output(k), target))
    rows = len(STAT_FIELDS)
    if not entries:  # no float layer to round (an integer model): nothing to compare
        return [], np.zeros((0, rows)), np.zeros((0, rows)) if local else None
    got = _run(model, feeds, wanted)
    step = 3 if local else 2
    limit = F16_MAX if target == "f16" else None
    acc = np.array([stats(got[j + 1], got[j], limit) for j in range(0, len(got), step)])
    loc = np.array([stats(got[j + 2], got[j], limit) for j in range(0, len(got), step)]) \
        if local else None
    return entries, acc, loc


def simulate_in_child(xml: str, feeds: Mapping[str, np.ndarray], target: str,
                      kept: Iterable[str] = ()) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """In the worker: each output of ``xml`` as ``(name, simulated, exact)``."""
    from .models import read_model

    model = read_model(xml)
    sim, twin = _simulate(model, target, set(kept))
    results = model.get_results()
    exact = [r.input_value(0) for r in results]
    simulated = [twin[r].input_value(0) for r in results]
    got = _run(model, feeds, exact + simulated)
    n = len(results)
    return [(r.get_friendly_name(), got[n + k], got[k]) for k, r in enumerate(results)]


def native_bf16() -> bool:
    """Whether this CPU computes bf16 itself (avx512_bf16 or AMX): the plugin's own
    capabilities, else /proc/cpuinfo's flags."""
    try:
        caps = core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        return "BF16" in [str(c).upper() for c in caps]
    except RuntimeError:
        pass
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def native_in_child(xml: str, feeds: Mapping[str, np.ndarray], precision: str
                    ) -> tuple[list[tuple[str, np.ndarray]], dict[str, str]]:
    """In the worker: ``xml`` compiled at ``INFERENCE_PRECISION_HINT`` ``precision``, its
    outputs, and the runtime model's precision of each node (by its original names)."""
    from .models import read_model

    model = read_model(xml)
    compiled = core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": precision})
    request = run_request(compiled, feed_in_order(model.get_parameters(), feeds))
    outs = [(r.get_friendly_name(), np.array(request.get_output_tensor(k).data))
            for k, r in enumerate(model.get_results())]
    precisions: dict[str, str] = {}
    for n in compiled.get_runtime_model().get_ordered_ops():
        rt = n.get_rt_info()
        if "runtimePrecision" not in rt:
            continue
        value = str(rt["runtimePrecision"].astype(str))
        names = str(rt["originalLayersNames"].astype(str)) if "originalLayersNames" in rt \
            else n.get_friendly_name()
        for name in names.split(","):
            precisions[name] = value
    return outs, precisions


def read_marks(xml: str) -> dict[str, list[str]]:
    """The rt_info keys of each op of ``xml`` as OpenVINO's reader keeps them."""
    from .models import read_model

    if not os.path.isfile(xml):
        raise RuntimeBridgeError("the model file does not exist", file=xml)
    model = read_model(xml)
    out = {n.get_friendly_name(): sorted(n.get_rt_info().keys())
           for n in model.get_ordered_ops()}
    return {k: v for k, v in out.items() if v}
