"""What ``reduce`` keeps while it cuts a model down: the failure, judged on each candidate.

A condition is given a :class:`Candidate` (the cut graph, its IR written to a private
folder, the arrays it is fed and the same arrays as an ``.npz``) and answers with a
:class:`Verdict`: whether the failure is still there, and its evidence in words. Every
run of a model goes through the runtime's worker process (``runs.Values``,
``comparison.compare_layers``), so that a native crash is a verdict, never the end of
the search.

- ``crashes``: the CPU plugin dies (a signal in the child) or refuses to compile or run
  the candidate; a candidate keeps the failure when it fails the same way (a crash by
  the same signal, or a refusal).
- ``nonfinite``: an output holds a NaN or an Inf while every input fed is finite (a NaN
  fed at a cut came from a layer left out, so it proves nothing).
- ``differs``: a layer output differs from the other model's (``--against``), as
  ``compare --all-layers`` judges, both cut to the same layers and fed the same arrays.
- ``invalid``, ``mismatch``: ``check``'s verdicts on a kept layer (no run).
- ``validate-fails``: a gather layer ``validate`` finds mismatching, invalid, in error or
  crashing.
- ``command``: the user's command, ``{model}`` (and ``{inputs}``, the ``.npz``) in it
  replaced, exits non-zero (and its output matches ``fail_regex``, when given).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..errors import OvgatherError, RuntimeBridgeError, UsageError
from ..runtime.worker import RuntimeCrash
from .cuts import Port, constant_layers, cut

__all__ = ["CONDITIONS", "Candidate", "Verdict", "Condition", "make_condition"]

#: The words of ``--until``.
CONDITIONS = ("crashes", "differs", "nonfinite", "invalid", "mismatch", "validate-fails",
              "command")


@dataclass
class Candidate:
    """A cut of the model: ``layers`` (nodes of the model), the graph ``H``, its IR at
    ``xml`` and its inputs (``feeds``, also at ``npz``), in a private ``folder``."""

    layers: frozenset[str]
    H: nx.MultiDiGraph
    xml: str
    feeds: dict[str, np.ndarray]
    npz: str
    folder: str


@dataclass
class Verdict:
    holds: bool
    evidence: str
    data: dict[str, Any] = field(default_factory=dict)


class Condition:
    """A failure a search keeps; :meth:`holds` judges one candidate. ``runs_model``: the
    candidate's tensors at the cuts are needed (the condition runs it)."""

    name = ""
    runs_model = True

    def setup(self, search: Any) -> None:
        """Called once before the first candidate, with the search (its model, values)."""
        self.search = search

    def holds(self, cand: Candidate) -> Verdict:
        raise NotImplementedError


class Crashes(Condition):
    name = "crashes"

    def __init__(self) -> None:
        self.kind: str | None = None

    def holds(self, cand: Candidate) -> Verdict:
        from ..comparison.remote import crash_words

        try:
            self.search.values.run(cand.xml, cand.feeds)
        except RuntimeCrash as crash:
            return self._same(f"crash:{crash.signal_name}", f"the runtime {crash_words(crash)}")
        except RuntimeBridgeError as err:
            return self._same("refused", err.message)
        return Verdict(False, "the CPU plugin compiled and ran it")

    def _same(self, kind: str, words: str) -> Verdict:
        if self.kind is None:
            self.kind = kind
        return Verdict(kind == self.kind, words, {"kind": kind})


class Nonfinite(Condition):
    name = "nonfinite"

    def holds(self, cand: Candidate) -> Verdict:
        fed = [n for n, a in cand.feeds.items()
               if np.asarray(a).dtype.kind == "f" and not np.isfinite(a).all()]
        if fed:
            return Verdict(False, f"the input '{fed[0]}' fed at a cut is not finite already")
        try:
            facts = self.search.values.run(cand.xml, cand.feeds)
        except (RuntimeCrash, RuntimeBridgeError) as err:
            return Verdict(False, f"it does not run: {err}")
        bad = [(name, shape, n) for name, shape, n in facts if n]
        if not bad:
            return Verdict(False, "every output is finite")
        name, shape, n = bad[0]
        size = int(np.prod(shape)) if shape else 1
        return Verdict(True, f"output '{name}' {shape} holds {n} NaN or Inf of {size} "
                       "elements, every input finite",
                       {"outputs": [{"name": a, "shape": b, "nonfinite": c} for a, b, c in bad]})


class CheckStatus(Condition):
    """``check`` finds a kept layer ``invalid`` or ``mismatch``."""

    runs_model = False

    def __init__(self, word: str) -> None:
        self.name = word

    def holds(self, cand: Candidate) -> Verdict:
        from ..infer import check

        report = check(cand.H)
        for lr in report.layers:
            if lr.status == self.name and lr.id in cand.layers:
                return Verdict(True, f"layer '{lr.name}' ({lr.type}) is {self.name}: "
                               f"{lr.message or ''}".rstrip(": "),
                               {"layer": lr.name, "message": lr.message})
        return Verdict(False, f"no kept layer is {self.name}")


class ValidateFails(Condition):
    name = "validate-fails"
    runs_model = False

    def holds(self, cand: Candidate) -> Verdict:
        from ..validate import validate

        report = validate(cand.H)
        for lv in report.layers:
            if lv.status in ("mismatch", "invalid", "error", "crashed"):
                return Verdict(True, f"validate: layer '{lv.name}' is {lv.status}: "
                               f"{getattr(lv, 'message', '') or ''}".rstrip(": "),
                               {"layer": lv.name, "status": lv.status})
        return Verdict(False, "validate finds every gather layer ok (or none)")


class _ByName(Mapping):
    """The tensors known in A, looked up by B's ports through the producer's friendly
    name and output index."""

    def __init__(self, GB: nx.MultiDiGraph, known: Mapping[tuple[str, int], np.ndarray]):
        self.GB, self.known = GB, known

    def __getitem__(self, port: Port) -> np.ndarray:
        u, fp = port
        ids = [p["id"] for p in self.GB.nodes[u]["outputs"]]
        return self.known[self.GB.nodes[u]["name"], ids.index(fp)]

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


class Differs(Condition):
    name = "differs"

    def __init__(self, against: str, rtol: float, atol: float) -> None:
        self.against, self.rtol, self.atol = against, rtol, atol

    def setup(self, search: Any) -> None:
        super().setup(search)
        from ..edit.extract import port_shapes
        from ..infer import check
        from ..runtime.interop import load_model

        if not os.path.isfile(self.against):
            raise UsageError(f"--against names no file: '{self.against}'")
        self.GB = load_model(self.against)
        self.constants = constant_layers(self.GB)
        self.shapes = port_shapes(self.GB, check(self.GB, search.sizes_for(self.GB)))
        self.by_name = {a["name"]: n for n, a in self.GB.nodes(data=True)}

    def holds(self, cand: Candidate) -> Verdict:
        from ..comparison import compare_layers
        from ..ir import write_ir

        G = self.search.G
        whole = len(cand.layers) == len(self.search.order)
        if whole:
            b_xml: Any = self.against
        else:
            nodes = [self.by_name[G.nodes[n]["name"]] for n in cand.layers
                     if G.nodes[n]["name"] in self.by_name]
            known = {}
            for name in cand.H.graph["reduce_ports"]:
                if name in cand.feeds:
                    known[cand.H.graph["reduce_cuts"][name]] = cand.feeds[name]
            for (u, fp), value in [*self.search.values.known.items(),
                                   *self.search.folded.items()]:
                ids = [p["id"] for p in G.nodes[u]["outputs"]]
                known.setdefault((G.nodes[u]["name"], ids.index(fp)), value)
            names = {v: k for k, v in cand.H.graph["reduce_cuts"].items()}
            HB = cut(self.GB, nodes, shapes=self.shapes, values=_ByName(self.GB, known),
                     constants=self.constants, names=names)
            b_xml = os.path.join(cand.folder, "against.xml")
            write_ir(HB, b_xml)
        try:
            report = compare_layers(cand.xml, b_xml, inputs=cand.npz, rtol=self.rtol,
                                    atol=self.atol)
        except OvgatherError as err:
            if whole:
                raise
            return Verdict(False, f"the two cuts cannot be compared: {err}")
        first = report.first_divergent
        if first is None:
            bad = [o for o in report.outputs.outputs if getattr(o, "status", "ok") != "ok"]
            if not bad:
                return Verdict(False, "every layer output pairs and agrees")
            o = bad[0]
            return Verdict(True, f"output '{getattr(o, 'name', '?')}' {o.status}",
                           {"output": getattr(o, "name", None)})
        return Verdict(True, f"layer '{first.a}' output {first.port} differs from "
                       f"'{first.b}': max abs error {first.max_abs:.3g}, max rel error "
                       f"{first.max_rel:.3g} (rtol {self.rtol:g}, atol {self.atol:g})",
                       {"layer": first.a, "port": first.port, "max_abs": first.max_abs,
                        "max_rel": first.max_rel})


class Command(Condition):
    """The user's command fails on the candidate."""

    name = "command"
    runs_model = True

    def __init__(self, command: str, fail_regex: str | None, timeout: float | None) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as err:
            raise UsageError(f"--command is not a command line: {err}") from None
        if not self.argv:
            raise UsageError("--command is empty")
        if not any("{model}" in a for a in self.argv):
            raise UsageError("--command must name the model as {model}, "
                             f"but got '{command}'")
        try:
            self.regex = re.compile(fail_regex) if fail_regex is not None else None
        except re.error as err:
            raise UsageError(f"--fail-regex is not a regular expression: {err}") from None
        self.timeout = timeout

    def holds(self, cand: Candidate) -> Verdict:
        argv = [a.replace("{model}", cand.xml).replace("{inputs}", cand.npz) for a in self.argv]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                                  timeout=self.timeout, check=False)
        except FileNotFoundError:
            raise UsageError(f"--command: no such program '{argv[0]}'") from None
        except subprocess.TimeoutExpired:
            return Verdict(False, f"the command ran past {self.timeout:g} s")
        if done.returncode == 0:
            return Verdict(False, "the command exits 0")
        text = (done.stdout or "") + (done.stderr or "")
        if self.regex is not None:
            found = self.regex.search(text)
            if found is None:
                return Verdict(False, f"the command exits {done.returncode}, but its output "
                               "does not match --fail-regex")
            line = text[:found.start()].count("\n")
            return Verdict(True, f"the command exits {done.returncode}; its output matches: "
                           f"{text.splitlines()[line].strip()[:200]}",
                           {"exit_code": done.returncode, "match": found.group(0)})
        return Verdict(True, f"the command exits {done.returncode}",
                       {"exit_code": done.returncode})


def make_condition(until: str, *, against: str | None = None, command: str | None = None,
                   fail_regex: str | None = None, rtol: float = 1e-4, atol: float = 1e-4,
                   timeout: float | None = None) -> Condition:
    """The condition ``until`` names (one of :data:`CONDITIONS`), with its options."""
    if until not in CONDITIONS:
        raise UsageError(f"--until is one of {', '.join(CONDITIONS)}, but got '{until}'")
    if (until == "differs") != (against is not None):
        raise UsageError("--against B goes with --until differs (and only with it)")
    if (until == "command") != (command is not None):
        raise UsageError("--command goes with --until command (and only with it)")
    if fail_regex is not None and until != "command":
        raise UsageError("--fail-regex goes with --command")
    if until == "crashes":
        return Crashes()
    if until == "nonfinite":
        return Nonfinite()
    if until in ("invalid", "mismatch"):
        return CheckStatus(until)
    if until == "validate-fails":
        return ValidateFails()
    if until == "differs":
        return Differs(os.fspath(against), rtol, atol)
    return Command(command, fail_regex, timeout)
