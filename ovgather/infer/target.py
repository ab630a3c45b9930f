"""What an older OpenVINO release cannot load or compile in a model (``check --target-runtime``).

OpenVINO's IR reader looks each layer up by its ``type`` in the opset its ``version`` names
and parses every element type the layer carries; an older release refuses the first layer
whose pair or type it does not know and names only that one. This module names all of them,
from the release table of ``ops/core/releases.py`` (generated from the releases
themselves), plus the layers the release's CPU plugin is known to refuse to compile. A
layer the newest reader refuses (``readable.refusal``: ``check`` calls it ``unknown``) is
refused by every release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..element_types import ELEMENT_TYPES, element_type_name
from ..graph.bodies import walk_bodies
from ..ops.core.registry import opset_number
from ..ops.core.releases import (
    COMPILE_LIMITS,
    NEWEST,
    RELEASES,
    builds,
    compiles_input,
    reads_type,
    release_of,
)
from .readable import refusal

__all__ = ["TargetProblem", "target_problems", "unread_types", "op_refused"]

#: what stops a layer: the reader refuses its op or an element type, or the plugin refuses it
STAGES = ("read", "compile")


@dataclass(frozen=True)
class TargetProblem:
    """One layer a release cannot load (``stage`` "read") or compile ("compile"), every
    reason in ``reasons``; a layer inside a body has the path id and name ``check`` gives
    it (``4/body/6``)."""

    id: str
    name: str
    type: str
    version: str | None
    line: int | None
    stage: str
    reasons: tuple[str, ...]

    @property
    def message(self) -> str:
        return "; ".join(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "version": self.version,
                "line": self.line, "stage": self.stage, "reasons": list(self.reasons)}


def target_problems(G: Any, release: str) -> list[TargetProblem]:
    """Every layer of ``G`` (bodies too) that OpenVINO ``release`` cannot read, then every
    one its CPU plugin is known to refuse to compile, in file order.

    ``release`` is named as OpenVINO names releases (``"2023.0"``; a patch such as
    ``"2023.0.2"`` is the same release); one the table does not hold is a UsageError.
    """
    release = release_of(release)
    graphs = [("", "", G), *[(ids, names, body) for ids, names, _, body in walk_bodies(G)]]
    stateful = any(attrs["type"] == "ReadValue" for *_, g in graphs for attrs in g._node.values())
    found = []
    for ids, names, g in graphs:
        for n, attrs in g._node.items():
            where = (ids + str(n), names + attrs["name"])
            reasons = _read_reasons(release, attrs) + _limits(release, g, n, attrs, stateful,
                                                              "read")
            if reasons:
                found.append(_problem(where, attrs, "read", reasons))
            reasons = [] if release == NEWEST else _compile_reasons(release, g, n, attrs,
                                                                    stateful)
            if reasons:
                found.append(_problem(where, attrs, "compile", reasons))
    return sorted(found, key=lambda p: (STAGES.index(p.stage), p.line is None, p.line or 0))


def _problem(where: tuple[str, str], attrs: dict, stage: str, reasons: list[str]
             ) -> TargetProblem:
    """``where``: the layer's path id and path name, as ``check`` lists body layers."""
    return TargetProblem(*where, attrs["type"], attrs.get("version"),
                         attrs.get("line"), stage, tuple(reasons))


def _read_reasons(release: str, attrs: dict) -> list[str]:
    """Why ``release``'s reader refuses this layer: its (type, opset) pair, then each
    element type it cannot parse, each named once."""
    reasons = []
    why = refusal(attrs["type"], attrs.get("version"))
    if why is not None:  # the newest reader refuses it: so does every older one
        reasons.append(f"OpenVINO {release} cannot read this layer: {why}")
    op, number, wanted, built = _versions(release, attrs)
    if why is None and wanted is not None:
        if built is None:
            reasons.append(_no_op_words(release, op, number))
        elif built != wanted and (attrs.get("data") or {}).get("rounding_type") == "ceil_torch":
            # 2024.0 builds MaxPool-8 / AvgPool-1 for opset14, whose rounding enum has no
            # ceil_torch: its read_model refuses the value (the other values mean the same)
            reasons.append(f"OpenVINO {release} builds {op}-{built} for opset{number}, "
                           f"which has no rounding_type ceil_torch")
    reasons += [f"OpenVINO {release} does not read the element type {name}"
                for name in unread_types(release, attrs)]
    return reasons


def _versions(release: str, attrs: dict) -> tuple[str, int | None, int | None, int | None]:
    """(op type as the table spells it, the layer's opset number, the op version the
    newest release builds for it, the one ``release`` builds or None)."""
    op = "Constant" if attrs["type"] == "Const" else attrs["type"]
    number = opset_number(attrs.get("version"))
    newest = RELEASES[NEWEST]["opsets"]
    wanted = builds(NEWEST, op, number) if number is not None and op in newest else None
    return op, number, wanted, None if wanted is None else builds(release, op, number)


def op_refused(release: str, attrs: dict) -> bool:
    """Whether ``release``'s reader refuses the layer's (type, opset) pair itself (not
    only one of its element types)."""
    _, _, wanted, built = _versions(release, attrs)
    return wanted is not None and built is None


def unread_types(release: str, attrs: dict) -> list[str]:
    """The element types of the layer (each once, in order) ``release`` cannot read."""
    found: list[str] = []
    for name, use in _element_types(attrs):
        if name not in found and not reads_type(release, name, use):
            found.append(name)
    return found


def _no_op_words(release: str, op: str, number: int) -> str:
    runs = RELEASES[release]["opsets"].get(op)
    if not runs:
        return f"OpenVINO {release} has no {op} in any opset, but the layer is opset{number}"
    return (f"OpenVINO {release} reads {op} from opset{runs[0][0]} to opset{runs[-1][1]}, "
            f"but the layer is opset{number}")


def _element_types(attrs: dict) -> list[tuple[str, str]]:
    """(element type, use) of everything in the layer the reader parses as a type: the
    Parameter's or Const's ``element_type``, other ``*_type`` attributes, output port
    precisions. An input port's precision repeats its producer's output: the producer is
    the layer to name."""
    own = {"Parameter": "parameter", "Const": "const"}.get(attrs["type"], "convert")
    texts = [(value, own if key == "element_type" else "convert")
             for key, value in (attrs.get("data") or {}).items() if key.endswith("_type")]
    texts += [(port.get("precision"), own) for port in attrs.get("outputs", ())]
    return [(element_type_name(t), use) for t, use in texts
            if element_type_name(t) in ELEMENT_TYPES]


def _compile_reasons(release: str, G: Any, n: str, attrs: dict, stateful: bool) -> list[str]:
    """The known CPU-plugin limits of ``release`` this layer of ``G`` (a body or the
    model) meets."""
    reasons = []
    if attrs["type"] == "Parameter":
        etype = element_type_name((attrs.get("data") or {}).get("element_type"))
        if reads_type(release, etype, "parameter") and not compiles_input(release, etype):
            reasons.append(f"OpenVINO {release}: the CPU plugin does not take a model input "
                           f"of element type {etype}")
    return reasons + _limits(release, G, n, attrs, stateful, "compile")


def _limits(release: str, G: Any, n: str, attrs: dict, stateful: bool, stage: str
            ) -> list[str]:
    """The known limits of ``release`` at ``stage`` the layer meets, in words."""
    return [f"OpenVINO {release}: {limit.message} ({limit.when})" for limit in COMPILE_LIMITS
            if limit.stage == stage and release in limit.releases
            and attrs["type"] == limit.op_type and _meets(limit, G, n, attrs, stateful)]


def _meets(limit: Any, G: Any, n: str, attrs: dict, stateful: bool) -> bool:
    """Whether the layer meets the condition of the limit (``CompileLimit.when``)."""
    op_type = limit.op_type
    if op_type == "ReadValue":
        if limit.when == "no initializer input":
            return not attrs.get("inputs")
        dims = attrs["outputs"][0].get("dims") if attrs.get("outputs") else None
        return dims is None or any(d < 0 for d in dims)
    if op_type == "IsNaN":
        return any(G._node[m]["type"] != "Result" for m in G._succ[n])
    if op_type == "Identity":
        return True
    inputs = attrs.get("inputs") or []  # ScaledDotProductAttention: port 3 is the mask
    return stateful and len(inputs) > 3 and element_type_name(inputs[3].get("precision")) \
        == "boolean"
