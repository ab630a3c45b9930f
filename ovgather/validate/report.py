"""What runtime proof reports: a verdict per layer and the model's report, for plain
``validate`` and ``--whole-model`` (:class:`ValidationReport` of :class:`LayerValidation`)
and for ``--all-layers`` (:class:`ProofReport` of :class:`LayerProof`), with the text rows
the CLI prints for the latter."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..runtime.core import INFERENCE_PRECISION

__all__ = ["STATUSES", "PROBLEMS", "model_verdicts", "LayerValidation", "ValidationReport",
           "PROOF_STATUSES", "PROBLEM_STATUSES", "LayerProof", "ProofReport", "summary_line",
           "left_out_line",
           "problem_rows", "declared_rows"]

STATUSES = ("ok", "mismatch", "invalid", "error", "skipped", "crashed")
PROBLEMS = ("mismatch", "invalid", "error", "crashed")
PROOF_STATUSES = ("ok", "looser", "shape differs", "fails at a size", "values differ",
                  "unchecked", "not run", "crashed", "unknown")
#: The statuses that fail the proof (exit 1).
PROBLEM_STATUSES = ("shape differs", "fails at a size", "values differ", "crashed", "unknown")


@dataclass
class LayerValidation:
    """One gather layer's verdict against the runtime."""

    id: str
    name: str
    type: str
    version: str | None
    line: int | None
    status: str = "ok"
    inputs: dict[str, str] = field(default_factory=dict)
    runtime_shape: str | None = None
    inferred_shape: str | None = None
    runtime_partial_shape: str | None = None
    inferred_partial_shape: str | None = None
    max_error: float | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "type": self.type, "version": self.version,
            "line": self.line, "status": self.status, "inputs": self.inputs,
            "runtime_shape": self.runtime_shape, "inferred_shape": self.inferred_shape,
            "runtime_partial_shape": self.runtime_partial_shape,
            "inferred_partial_shape": self.inferred_partial_shape,
            "max_error": self.max_error, "message": self.message,
        }


@dataclass
class ValidationReport:
    """The result of :func:`validate` or :func:`validate_whole_model` for one model."""

    path: str | None
    seed: int
    mode: str = "layers"
    layers: list[LayerValidation] = field(default_factory=list)
    #: the most bytes of tensors validate estimated it held at once (not in the JSON)
    peak_bytes: int = 0
    #: the layers OpenVINO's reader refuses (``infer.readable``): it cannot read the model
    unread: list[Any] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, int]:
        counts = Counter(lv.status for lv in self.layers)
        return {"layers": len(self.layers), **{status: counts[status] for status in STATUSES}}

    @property
    def nothing_proved(self) -> bool:
        """Not one gather layer was proved ``ok``: none ran, or the model has none (plain
        validate proves the gather family; ``--all-layers`` proves every layer)."""
        return not any(lv.status == "ok" for lv in self.layers)

    @property
    def ok(self) -> bool:
        """True when no layer disagrees with the runtime, OpenVINO reads the model and
        something was proved (skipped layers are not problems, unless all are)."""
        return not self.problems() and not self.unread and not self.nothing_proved

    def verdicts(self) -> list[str]:
        """What fails the model beside its layers' statuses, in words."""
        lines = model_verdicts(self.unread, self.nothing_proved and bool(self.layers),
                               "gather layer")
        if not self.layers:
            lines.append("nothing proved: the model has no gather layer, and plain validate "
                         "proves the gather family (validate --all-layers proves every layer)")
        return lines

    def problems(self) -> list[LayerValidation]:
        return [lv for lv in self.layers if lv.status in PROBLEMS]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "seed": self.seed, "mode": self.mode,
                "inference_precision": INFERENCE_PRECISION,
                "summary": self.summary, "unread": [u.to_dict() for u in self.unread],
                "nothing_proved": self.nothing_proved,
                "layers": [lv.to_dict() for lv in self.layers]}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps({"models": [self.to_dict()]}, indent=indent)


@dataclass
class LayerProof:
    """One layer: declared, inferred and real shapes, per input size run."""

    id: str
    name: str
    type: str
    version: str | None
    line: int | None
    status: str = "not run"
    declared: list[str] = field(default_factory=list)
    check_status: str = "unchecked"
    inferred: dict[str, list[str]] = field(default_factory=dict)
    real: dict[str, list[str]] = field(default_factory=dict)
    message: str = ""
    #: a gather-family layer's value check (``validate``'s status, max_error, message)
    values: dict[str, Any] | None = None
    #: by size label: why ovgather's rules reject the layer at that size (not in the JSON)
    invalid: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "version": self.version,
                "line": self.line, "status": self.status, "declared": self.declared,
                "check_status": self.check_status, "inferred": self.inferred,
                "real": self.real, "values": self.values, "message": self.message}


@dataclass
class ProofReport:
    """What ``validate --all-layers`` found for one model."""

    path: str | None
    sizes: dict[str, dict[str, str]] = field(default_factory=dict)
    layers: list[LayerProof] = field(default_factory=list)
    compiles: int = 0
    seconds: float = 0.0
    mode: str = "all-layers"
    #: the most bytes of tensors one run was planned to hold (not in the JSON)
    peak_bytes: int = 0
    #: sizes inside the dims' bounds the runtime failed at, by label: ``sizes`` (by
    #: Parameter), ``message`` (the runtime's error), ``layers`` (the names blamed)
    failed: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the layers OpenVINO's reader refuses (``infer.readable``): it cannot read the model
    unread: list[Any] = field(default_factory=list)
    #: the layers ``check`` counts and the proof leaves out, by type (Consts, Results:
    #: nothing runs there), so that the two counts add up
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def nothing_proved(self) -> bool:
        """There were layers to prove and the runtime proved not one."""
        return bool(self.layers) and self.summary["proved"] == 0

    def verdicts(self) -> list[str]:
        """What fails the model beside its layers' statuses, in words."""
        return model_verdicts(self.unread, self.nothing_proved, "layer")

    @property
    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(PROOF_STATUSES, 0)
        for lp in self.layers:
            counts[lp.status] += 1
        checked = sum(lp.values is not None and lp.values["status"] == "ok"
                      for lp in self.layers)
        return {"layers": len(self.layers), **counts, "proved": counts["ok"] + counts["looser"],
                "values checked": checked, "compiles": self.compiles}

    @property
    def ok(self) -> bool:
        """No layer's shape or values differ, none crashed the runtime, OpenVINO reads the
        model, something was proved, and the model runs at every size tried that ran at
        some size (a size the runtime fails at is a problem even when no layer can be
        named)."""
        return not self.failed and not self.unread and not self.nothing_proved and not any(
            lp.status in PROBLEM_STATUSES for lp in self.layers)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "mode": self.mode,
                "inference_precision": INFERENCE_PRECISION, "sizes": self.sizes,
                "sizes failed": self.failed, "summary": self.summary,
                "unread": [u.to_dict() for u in self.unread],
                "nothing_proved": self.nothing_proved,
                "left_out": dict(sorted(self.left_out.items())),
                "seconds": round(self.seconds, 3),
                "layers": [lp.to_dict() for lp in self.layers]}


def model_verdicts(unread: Sequence[Any], nothing_proved: bool, what: str) -> list[str]:
    """The lines that fail a model as a whole: OpenVINO cannot read it (the layers it
    refuses named), or the proof proved nothing it set out to prove."""
    lines = []
    if unread:
        from ..infer.readable import READER_RELEASE

        named = ", ".join(u.words() for u in unread[:5])
        more = f" and {len(unread) - 5} more" if len(unread) > 5 else ""
        lines.append(f"OpenVINO {READER_RELEASE} cannot read this model: it refuses "
                     f"{named}{more}")
    if nothing_proved:
        lines.append(f"nothing proved: not one {what} was proved on the runtime")
    return lines


def summary_line(report: ProofReport) -> str:
    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in PROOF_STATUSES if s[k])
    gathers = any(lp.values is not None for lp in report.layers)
    values = f", {s['values checked']} gather(s) agree with the reference" if gathers else ""
    return (f"{report.path}: {s['layers']} layers (all layers, {len(report.sizes)} input "
            f"size(s), {s['compiles']} compile(s){values}): {s['proved']} proved; {counts} "
            f"({INFERENCE_PRECISION} inference)")


def left_out_line(report: ProofReport) -> str | None:
    """The layers ``check`` counts that the proof leaves out, and why, so that the two
    counts add up (None when there are none)."""
    if not report.left_out:
        return None
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(report.left_out.items()))
    return f"  left out: {kinds} (nothing runs there; check counts them too)"


def problem_rows(report: ProofReport) -> Sequence[str]:
    """One line per size the runtime failed at without naming a layer, then one per
    layer whose shape or values differ or that fails at a size: declared, inferred and
    real side by side, or what the value check found."""
    rows = [f"  fails at {label} ({', '.join(f'{n}={s}' for n, s in f['sizes'].items())}), "
            f"no layer named: {f['message']}" for label, f in report.failed.items()
            if not f["layers"]]
    for lp in report.layers:
        if lp.status not in PROBLEM_STATUSES:
            continue
        where = f"line {lp.line}, " if lp.line is not None else ""
        rows.append(f"  {lp.status}  {lp.name} ({where}id {lp.id}, {lp.type}): declared "
                    f"{', '.join(lp.declared)}; {lp.message}")
    return rows


def declared_rows(report: ProofReport) -> Sequence[str]:
    """Layers whose declared dims ``check`` finds wrong: declared, inferred and real side
    by side (the real shape at the first size run)."""
    rows = []
    for lp in report.layers:
        if lp.check_status != "mismatch":
            continue
        label = next(iter(lp.real), None)
        real = ", ".join(lp.real[label]) if label else "-"
        inferred = ", ".join(lp.inferred[label]) if label else "-"
        rows.append(f"  declared wrong  {lp.name} (id {lp.id}, {lp.type}): declared "
                    f"{', '.join(lp.declared)}, inferred {inferred}, real {real}")
    return rows
