"""``precision``: where half precision (f16 or bf16) breaks a model, and an IR that keeps
just those layers in f32.

**The device model.** Any CPU can see it: the model is run in f32 with every float
tensor a layer writes rounded to the target type (``runtime.precision``: f16 overflows to
±Inf and keeps its subnormals, bf16 rounds to nearest-even on the upper 16 bits;
accumulation inside each layer stays f32). What is rounded follows OpenVINO's own f16
compression (``ConvertPrecision`` with precision-sensitive subgraphs kept, as the GPU
plugin and f16 CPUs run it, :func:`device_kept`): a division by a small eps (a norm), an
Exp whose values reach a ReduceSum or ReduceMean (a softmax's denominator), a float Range
and the layers the IR marks stay f32, with the subgraph their mark spreads to, and MVN
and NormalizeL2 layers; so do constant subgraphs, integer tensors and quantized layers
(a FakeQuantize and what it feeds). A layer in the target precision reads its constants
(weights, biases, an additive mask) as the device stores them: rounded, and for f16
clamped to ±65504 (an f16-compressed IR's weights round to themselves). The
same device model is used for bf16; on a CPU that computes bf16 itself (avx512_bf16 or
AMX) the model is also compiled natively at bf16 and both are reported.

**Per layer output**, two errors against f32: the *accumulated* error (the simulated
model's output there, as ``compare --all-layers`` reports it: max abs, max rel, cosine)
and the *local* error (the layer alone in the target precision: a copy of it fed its
exact f32 inputs rounded, its output rounded). One compile and one run give both for
every layer. The first layer whose simulated output holds a NaN or Inf that f32 does not
is named with its XML line.

**The fix** (``fix=True``): layers ranked by local error (a non-finite one first, then
the largest error relative to the tensor's largest magnitude); the top ``k`` are kept in
f32 for ``k = 1, 2, 4, ...`` until the simulated outputs are within ``rtol``/``atol`` of
f32, then ``k`` is bisected, then each kept layer is dropped in turn while the outputs
stay within tolerance (every step a run; a layer the device keeps is no candidate, and
a candidate's mark spreads as the device spreads it). A kept layer computes in f32 and
reads its inputs as they come; its output is rounded only where a layer in the target
precision reads it (the device converts there). The written IR marks each kept layer with the
rt_info ``DisablePrecisionConversion`` (value ``dynamic:f16`` or ``dynamic:bf16``), the
key OpenVINO 2026.4's IR reader keeps (``disable_fp16_compression`` it drops; the old
``precise`` it reads as ``DisablePrecisionConversion``).
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..errors import UsageError
from .search import default_sizes

__all__ = ["precision", "PrecisionReport", "TARGETS", "RTOL", "ATOL", "device_kept",
           "mark_layers", "MARK"]

TARGETS = ("f16", "bf16")
#: Default tolerances of the outputs (half precision is never within compare's 1e-5).
RTOL, ATOL = 1e-2, 1e-2
#: The rt_info attribute that keeps a layer in f32 (value: ``dynamic:<target>``).
MARK = "DisablePrecisionConversion"
#: Runs of the fix, at most.
MAX_RUNS = 40
#: OpenVINO's ``propagate_through_ops`` (mark_subgraphs_to_keep_in_mixed_precision.cpp): the
#: f32 mark spreads through these, down from a marked layer and up to its inputs
_UNARY = {"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceiling", "Clamp", "Cos",
          "Cosh", "Elu", "Erf", "Exp", "Floor", "Gelu", "HSigmoid", "HSwish", "Log", "Mish",
          "Negative", "Relu", "Round", "Sigmoid", "Sign", "Sin", "Sinh", "SoftPlus",
          "SoftSign", "Sqrt", "Tan", "Tanh"}
_BINARY = {"Add", "Subtract", "Multiply", "Divide", "Power", "Maximum", "Minimum", "Mod",
           "FloorMod", "SquaredDifference"}
_THROUGH = _UNARY | _BINARY | {
    "Squeeze", "Unsqueeze", "Reshape", "Broadcast", "MVN", "NormalizeL2", "StridedSlice",
    "ReduceSum", "ReduceMean", "Slice", "VariadicSplit", "Split", "Concat", "Convert",
    "Const", "Constant", "Tile"}
_CONSTANTS = {"Const", "Constant"}
#: the range path of a float Range (MarkFloatingPointRange)
_RANGE_PATH = {"Convert", "Greater", "GreaterEqual", "Less", "LessEqual", "Reshape", "Range",
               "Squeeze", "Unsqueeze"}
_SUMS = {"ReduceSum", "ReduceMean"}
_ALWAYS_F32 = {"MVN", "NormalizeL2"}
#: an eps at most f16's smallest normal marks its division (MarkDivWithEps)
_EPS = 2.0 ** -14
_REAL = {"FP64", "FP32", "FP16", "BF16", "F64", "F32", "F16"}
#: layers shown under "largest local error"
_TOP = 5


@dataclass
class PrecisionReport:
    """What ``precision`` found: each rounded layer output's errors, the outputs before
    (and after ``fix``), the layers the device keeps and the fix keeps in f32."""

    model: str | None
    target: str
    rtol: float
    atol: float
    device: str = ""
    native: str = ""
    layers: list[dict[str, Any]] = field(default_factory=list)
    device_kept: list[str] = field(default_factory=list)
    first_nonfinite: dict[str, Any] | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    fixed_outputs: list[dict[str, Any]] = field(default_factory=list)
    native_outputs: list[dict[str, Any]] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)
    fixed: bool | None = None
    output: str | None = None
    runs: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The outputs in the target precision are within tolerance of f32."""
        return all(o["ok"] for o in self.outputs)

    def top(self, n: int = _TOP) -> list[dict[str, Any]]:
        """The layers of the largest local error, largest first."""
        ranked = sorted(self.layers, key=_rank_key, reverse=True)
        return [d for d in ranked if _rank_key(d) > (0, 0.0)][:n]

    def to_dict(self) -> dict[str, Any]:
        return _plain({
            "model": self.model, "target": self.target, "rtol": self.rtol, "atol": self.atol,
            "device": self.device, "native": self.native, "ok": self.ok,
            "outputs": self.outputs, "first_nonfinite": self.first_nonfinite,
            "top_local": [d["name"] for d in self.top()], "device_kept": self.device_kept,
            "layers": self.layers, "fixed": self.fixed, "kept": self.kept,
            "fixed_outputs": self.fixed_outputs, "native_outputs": self.native_outputs,
            "output": self.output, "runs": self.runs, "seconds": round(self.seconds, 3)})

    def lines(self) -> list[str]:
        """The text report (no timings: the JSON has them)."""
        out = [f"{self.target} on {self.model or 'the model'}: {len(self.layers)} layer "
               f"outputs rounded ({self.device})"]
        for o in self.outputs:
            out.append(f"  output {o['name']}: {_errors(o)} "
                       f"{'ok' if o['ok'] else 'differs'}")
        f = self.first_nonfinite
        out.append("first non-finite: " + (f"{f['name']} ({f['type']}) line {f['line']}"
                                           if f else "none"))
        top = self.top()
        if top:
            out.append("largest local error (the layer alone in " + self.target + "):")
            out += [f"  {d['name']} ({d['type']}) line {d['line']}: local "
                    f"{_num(d['local_scaled'])}, accumulated max abs "
                    f"{_num(d['max_abs'])} cosine {_num(d['cosine'])}" for d in top]
        if self.device_kept:
            out.append(f"kept in f32 by the device: {len(self.device_kept)} layers")
        out.append(f"native {self.target}: {self.native}")
        for o in self.native_outputs:
            out.append(f"  output {o['name']}: {_errors(o)} {'ok' if o['ok'] else 'differs'}")
        if self.fixed is not None:
            if self.fixed:
                out.append(f"fix: {len(self.kept)} layers kept in f32 ({self.runs} runs)")
            else:
                out.append(f"fix: not found in {self.runs} runs")
            out += [f"  {d['name']} ({d['type']}) line {d['line']}" for d in self.kept]
            for before, after in zip(self.outputs, self.fixed_outputs, strict=False):
                out.append(f"  output {after['name']}: max abs {_num(before['max_abs'])} -> "
                           f"{_num(after['max_abs'])} {'ok' if after['ok'] else 'differs'}")
        if self.output:
            out.append(f"wrote {self.output}")
        return out


def _num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return f"{x:.3g}"


def _errors(o: Mapping[str, Any]) -> str:
    return f"max abs {_num(o['max_abs'])} max rel {_num(o['max_rel'])}"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _rank_key(d: Mapping[str, Any]) -> tuple[int, float]:
    s = d["local_scaled"]
    return (1 if d["local_nonfinite"] else 0,
            0.0 if s is None or not math.isfinite(s) else s)


def device_kept(G: nx.MultiDiGraph, marked: set[str] = frozenset()) -> set[str]:
    """Friendly names of the layers OpenVINO's f16 compression keeps in f32, as its
    ``MarkSugraphsToKeepInMixedPrecision`` marks them: a float Range and its path, a
    division by a small eps (``x / [Sqrt](Add|Maximum(y, eps))``, ``x * Pow(.., -z)``: a
    norm), an Exp whose values reach a ReduceSum/ReduceMean (a softmax's denominator), and
    the layers ``marked`` in the IR; the mark spreads down through elementwise ops,
    reductions and data movement, then up to their inputs, until a MatMul, Convolution or
    the like. MVN and NormalizeL2 layers are kept as well."""
    order = list(nx.topological_sort(G))
    kind = {n: G.nodes[n]["type"] for n in order}
    by_name = {G.nodes[n]["name"]: n for n in order}

    def real(u: str, port: int) -> bool:
        outs = G.nodes[u].get("outputs") or []
        return any(o["id"] == port and str(o.get("precision") or "").upper() in _REAL
                   for o in outs)

    def ins(v: str) -> list[tuple[str, int]]:
        return [(u, d["from_port"]) for u, _, d in
                sorted(G.in_edges(v, data=True), key=lambda e: e[2]["to_port"])]

    def outs(u: str) -> list[tuple[str, int]]:
        return [(v, d["from_port"]) for _, v, d in G.out_edges(u, data=True)]

    mark = {by_name[m] for m in marked if m in by_name}
    ranged: set[str] = set()
    for n in order:  # MarkFloatingPointRange
        if kind[n] == "Range" and real(n, 0):
            ranged.add(n)
            mark.add(n)
            mark.update(u for u, _ in ins(n))
        elif kind[n] in _RANGE_PATH and any(u in ranged for u, _ in ins(n)):
            ranged.add(n)
            mark.add(n)
    mark.update(n for n in order if _divides_by_eps(G, n, kind, ins))
    path: set[str] = set()  # MarkExpInReduceOpPath
    for n in reversed(order):
        if kind[n] in _SUMS or (kind[n] in _THROUGH and any(
                v in path and real(n, p) for v, p in outs(n))):
            path.add(n)
    mark.update(n for n in path if kind[n] == "Exp")
    for n in order:  # PropagateDownMarkToKeepInMixedPrecision
        if kind[n] in _THROUGH and kind[n] != "Convert" and n not in mark and any(
                u in mark and real(u, p) for u, p in ins(n)):
            mark.add(n)
    for n in reversed(order):  # PropagateUpMarkToKeepInMixedPrecision
        if kind[n] not in _THROUGH or n in mark:
            continue
        if kind[n] == "Convert" and not all(kind[u] in _CONSTANTS for u, _ in ins(n)):
            continue
        if any(v in mark and real(n, p) for v, p in outs(n)):
            mark.add(n)
    mark.update(n for n in order if kind[n] in _ALWAYS_F32)
    weights = {n for n in mark if kind[n] == "Convert"  # a constant's decompression
               and all(kind[u] in _CONSTANTS for u, _ in ins(n))}
    return {G.nodes[n]["name"] for n in mark - weights if kind[n] not in _CONSTANTS}


def _divides_by_eps(G: nx.MultiDiGraph, n: str, kind: Mapping[str, str],
                    ins: Callable[[str], list[tuple[str, int]]]) -> bool:
    """``n`` is the root of ``x / [Sqrt](Add|Maximum(y, eps))`` or ``x * Power(Add|Maximum(y,
    eps), -z)`` with every eps at most f16's smallest normal (MarkDivWithEps)."""
    from ..ir import const_value

    def constant(u: str) -> np.ndarray | None:
        if kind[u] == "Convert":
            src = ins(u)
            u = src[0][0] if src else u
        if kind[u] not in _CONSTANTS:
            return None
        try:
            return np.asarray(const_value(G, u), np.float64)
        except Exception:  # an unreadable or raw-typed constant: no eps
            return None

    def eps_sum(u: str) -> bool:
        if kind[u] not in ("Add", "Maximum"):
            return False
        values = [constant(w) for w, _ in ins(u)]
        return any(v is not None and v.size and bool(np.all(v <= _EPS)) for v in values)

    args = [u for u, _ in ins(n)]
    if kind[n] == "Divide" and len(args) == 2:
        d = args[1]
        if kind[d] == "Sqrt":
            d = ins(d)[0][0] if ins(d) else d
        return eps_sum(d)
    if kind[n] == "Multiply" and len(args) == 2:
        for p in args:
            if kind[p] != "Power" or len(ins(p)) != 2:
                continue
            base, exponent = (u for u, _ in ins(p))
            z = constant(exponent)
            if eps_sum(base) and (z is None or (z.size and bool(np.all(z < 0)))):
                return True
    return False


def mark_layers(G: nx.MultiDiGraph, names: set[str], target: str) -> nx.MultiDiGraph:
    """A copy of ``G`` whose layers named in ``names`` carry the f32 mark in rt_info."""
    H = G.copy()
    tag = f'<attribute name="{MARK}" version="0" value="dynamic:{target}"/>'
    for n, a in H.nodes(data=True):
        if a["name"] not in names:
            continue
        a = H.nodes[n]
        text = a.get("rt_info")
        if not text:
            a["rt_info"] = f"<rt_info>{tag}</rt_info>"
        elif f'name="{MARK}"' in text:
            continue
        elif text.rstrip().endswith("/>") and "</rt_info>" not in text:
            a["rt_info"] = f"<rt_info>{tag}</rt_info>"
        else:
            a["rt_info"] = text.replace("</rt_info>", f"{tag}</rt_info>", 1)
    return H


def _output_rows(got: list[tuple[str, np.ndarray, np.ndarray]], rtol: float, atol: float
                 ) -> list[dict[str, Any]]:
    from ..comparison.values import differences

    rows = []
    for name, sim, exact in got:
        max_abs, max_rel, bad = differences(np.asarray(sim), np.asarray(exact), rtol, atol)
        rows.append({"name": name, "max_abs": float(max_abs), "max_rel": float(max_rel),
                     "bad": int(bad), "ok": bad == 0})
    return rows


def _cosine(row: np.ndarray) -> float | None:
    dot, aa, bb = float(row[2]), float(row[3]), float(row[4])
    if aa == 0 or bb == 0:
        return 1.0 if aa == bb else 0.0
    return dot / math.sqrt(aa * bb)


def _layer_rows(G: nx.MultiDiGraph, entries: list[tuple[str, int, str]], acc: np.ndarray,
                loc: np.ndarray) -> list[dict[str, Any]]:
    lines = {a["name"]: a.get("line") for _, a in G.nodes(data=True)}
    rows = []
    for (name, port, kind), a, b in zip(entries, acc, loc, strict=True):
        peak = float(b[7])
        scaled = float(b[0]) / peak if peak > 0 else (0.0 if b[0] == 0 else math.inf)
        rows.append({"name": name, "port": port, "type": kind, "line": lines.get(name),
                     "max_abs": float(a[0]), "max_rel": float(a[1]), "cosine": _cosine(a),
                     "nonfinite": int(a[5]) > int(a[6]),
                     "local_max_abs": float(b[0]), "local_max_rel": float(b[1]),
                     "local_cosine": _cosine(b), "local_scaled": scaled,
                     "local_nonfinite": int(b[5]) > int(b[6])})
    return rows


def precision(
    model: Any,
    target: str = "f16",
    *,
    fix: bool = False,
    output: str | os.PathLike | None = None,
    inputs: Mapping[str, Any] | str | os.PathLike | None = None,
    shapes: Mapping[str, Any] | None = None,
    seed: int = 0,
    rtol: float = RTOL,
    atol: float = ATOL,
    max_runs: int = MAX_RUNS,
    native: bool | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[nx.MultiDiGraph | None, PrecisionReport]:
    """Where ``model`` (an IR path or graph) breaks in ``target`` (``"f16"`` or
    ``"bf16"``), simulated on any CPU; with ``fix`` the fewest layers kept in f32 for
    the outputs to be within ``rtol``/``atol`` of f32 (the marked graph is returned, and
    written to ``output`` when given). ``native``: also compile at bf16 on the CPU
    (default: when the CPU computes bf16).

    >>> fixed, report = precision("model.xml", "f16", fix=True)       # doctest: +SKIP
    >>> report.first_nonfinite["name"], [d["name"] for d in report.kept]  # doctest: +SKIP
    """
    from ..comparison.inputs import load_inputs
    from ..ir import read_ir, write_ir
    from ..runtime.precision import (
        native_bf16,
        native_in_child,
        probe_in_child,
        simulate_in_child,
    )
    from ..runtime.worker import shared_worker
    from .runs import make_inputs

    if target not in TARGETS:
        raise UsageError(f"the target precision must be f16 or bf16, but got '{target}'")
    for what, tol in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0):
            raise UsageError(f"{what} must be a number >= 0, but got {tol!r}")
    if output is not None and not os.fspath(output).lower().endswith(".xml"):
        raise UsageError(f"the output must name an .xml file, but got '{os.fspath(output)}'")
    started = time.perf_counter()
    say = progress or (lambda _text: None)
    G = read_ir(os.fspath(model)) if isinstance(model, (str, os.PathLike)) else model
    path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else G.graph.get("xml_path")
    given = load_inputs(inputs) if inputs is not None else {}
    report = PrecisionReport(path, target, rtol, atol,
                             device="simulated: OpenVINO's f16 compression, as GPU runs it")
    worker = shared_worker()
    with tempfile.TemporaryDirectory(prefix="ovgather-precision-") as folder:
        xml = path if path and os.path.isfile(path) else os.path.join(folder, "model.xml")
        if xml != path:
            write_ir(G, xml)
        sizes = default_sizes(G, shapes)
        sizes.update({k: list(np.shape(v)) for k, v in given.items() if k in sizes})
        feeds = dict(given)
        if any(k not in feeds for k in sizes):
            made = worker.call(make_inputs, xml, sizes, seed)
            feeds.update({k: v for k, v in made.items() if k not in feeds})
        marked = {a["name"] for _, a in G.nodes(data=True)
                  if f'name="{MARK}"' in (a.get("rt_info") or "")}
        keep = device_kept(G, marked)
        report.device_kept = sorted(keep)
        say("layers")
        entries, acc, loc = worker.call(probe_in_child, xml, feeds, target, sorted(keep), True)
        report.runs += 1
        report.layers = _layer_rows(G, entries, acc, loc)
        report.first_nonfinite = next(({k: d[k] for k in ("name", "port", "type", "line")}
                                       for d in report.layers if d["nonfinite"]), None)
        say("outputs")
        report.outputs = _output_rows(
            worker.call(simulate_in_child, xml, feeds, target, sorted(keep)), rtol, atol)
        report.runs += 1
        if native is None:
            native = target == "bf16" and worker.call(native_bf16)
        if native:
            got, _ = worker.call(native_in_child, xml, feeds, target)
            exact = {o[0]: o[2] for o in worker.call(simulate_in_child, xml, feeds, target,
                                                     sorted(keep))}
            report.native_outputs = _output_rows([(n, v, exact[n]) for n, v in got],
                                                 rtol, atol)
            report.native = "ran (INFERENCE_PRECISION_HINT " + target + ")"
        else:
            report.native = ("not run (this CPU has no " + target + ")" if target == "bf16"
                             else "not run (the simulation only: f16 is a GPU's precision)")
        fixed_graph = None
        if fix:
            say("fix")

            def passes(names: set[str]) -> tuple[bool, list[dict[str, Any]]]:
                # as the device reads the marks: each spreads as OpenVINO's own do
                rows = _output_rows(worker.call(simulate_in_child, xml, feeds, target,
                                                sorted(device_kept(G, marked | names))),
                                    rtol, atol)
                report.runs += 1
                return all(r["ok"] for r in rows), rows

            chosen, rows = _search(report, passes, max_runs, keep) if not report.ok \
                else (set(), report.outputs)
            report.fixed = chosen is not None
            if chosen is not None:
                report.fixed_outputs = rows
                by_name = {d["name"]: d for d in report.layers}
                report.kept = [{k: by_name[n][k] for k in ("name", "type", "line")}
                               for n in sorted(chosen, key=lambda n: by_name[n]["line"] or 0)]
                fixed_graph = mark_layers(G, chosen, target)
                if output is not None:
                    write_ir(fixed_graph, os.fspath(output))
                    report.output = os.fspath(output)
    report.seconds = time.perf_counter() - started
    return fixed_graph, report


def _search(report: PrecisionReport, passes: Callable[[set[str]], tuple[bool, list]],
            max_runs: int, kept: set[str] = frozenset()
            ) -> tuple[set[str] | None, list[dict[str, Any]]]:
    """The fewest top-ranked layers whose keeping passes: doubling, bisecting, dropping
    (a layer the device keeps already, ``kept``, is not a candidate)."""
    ranked = list(dict.fromkeys(d["name"] for d in sorted(
        report.layers, key=_rank_key, reverse=True)
        if _rank_key(d) > (0, 0.0) and d["name"] not in kept))
    seen = set(ranked) | set(kept)
    ranked += list(dict.fromkeys(d["name"] for d in report.layers if d["name"] not in seen))
    judged: dict[frozenset[str], tuple[bool, list]] = {}

    def judge(names: set[str]) -> tuple[bool, list]:
        key = frozenset(names)
        if key not in judged:
            judged[key] = passes(set(names))
        return judged[key]

    low, high, k = 0, None, 1
    while k <= len(ranked) and len(judged) < max_runs:
        if judge(set(ranked[:k]))[0]:
            high = k
            break
        low, k = k, min(2 * k, len(ranked)) if k < len(ranked) else k + 1
    if high is None:
        return None, []
    while high - low > 1 and len(judged) < max_runs:
        mid = (low + high) // 2
        if judge(set(ranked[:mid]))[0]:
            high = mid
        else:
            low = mid
    chosen = set(ranked[:high])
    for name in reversed(ranked[:high]):  # the smallest local error first
        if len(chosen) == 1 or len(judged) >= max_runs:
            break
        trial = chosen - {name}
        if judge(trial)[0]:
            chosen = trial
    return chosen, judge(chosen)[1]
