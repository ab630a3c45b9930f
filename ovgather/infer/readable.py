"""Whether OpenVINO's IR reader builds a layer at all: the one answer behind ``check``'s
``unknown`` status, ``check --target-runtime`` and ``validate``'s verdict.

OpenVINO's reader looks a layer's ``type`` up in the opset its ``version`` names and
refuses the whole model when the opset does not hold it ("Opset opset17 doesn't contain
the operation with type: SuperReLU", "Cannot create X layer … from unsupported opset:
custom"). Such a layer is not merely a layer ovgather has no rule for (``unchecked``: the
reader builds it, ovgather keeps its declared dims): the model cannot be read, so no
verdict on it may be OK. The opset table (``ops/core/opsets.json``, made from the
installed OpenVINO) and the registry's reading of versions decide.

An extension loaded into OpenVINO may provide a type the tables do not hold: a caller
that loaded one asks :func:`cannot_read` with ``extension_types``.

>>> cannot_read("Relu", "opset1") is None, cannot_read("GroupedMatMul", "opset17") is None
(True, True)
>>> refusal("SuperReLU", "opset17")
"no opset holds an op 'SuperReLU' (an extension would have to provide it)"
>>> cannot_read("Relu", "opset17")
'OpenVINO 2026.4 cannot read this layer: opset17 has no Relu (it is in opset1 to opset16)'
>>> cannot_read("SuperReLU", "opset17", extension_types={"SuperReLU"}) is None
True
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..errors import UnsupportedOpError
from ..ops.core import registry
from ..ops.core.opsets import LAST_OPSET, OPENVINO_VERSION, OPSETS
from ..ops.core.spec import openvino_type

__all__ = ["READER_RELEASE", "cannot_read", "refusal", "UnreadLayer", "unread_layers"]

#: the release whose reader the tables describe ("2026.4")
READER_RELEASE = ".".join(OPENVINO_VERSION.split(".")[:2])

#: (type, version) -> why the reader refuses it, or None: asked once per distinct pair
_SEEN: dict[tuple[str, str | None], str | None] = {}


def cannot_read(op_type: str, version: str | None,
                extension_types: Collection[str] = ()) -> str | None:
    """Why OpenVINO's reader refuses a layer of ``op_type`` in the opset ``version``
    names, or None when it builds one. A layer without a version (a graph built in
    Python) is not judged. ``extension_types``: op types a loaded extension provides
    (the reader takes them in any version)."""
    why = refusal(op_type, version, extension_types)
    return None if why is None else f"OpenVINO {READER_RELEASE} cannot read this layer: {why}"


def refusal(op_type: str, version: str | None,
            extension_types: Collection[str] = ()) -> str | None:
    """What the reader finds wrong with the pair (``opset17 has no Relu (…)``), or None:
    :func:`cannot_read` without the words naming the release. No release OpenVINO made
    before reads such a pair either: an opset never loses an op."""
    if version is None or op_type in extension_types:
        return None
    key = (op_type, version)
    found = _SEEN.get(key, _SEEN)
    if found is _SEEN:
        found = _SEEN[key] = _why(op_type, version)
    return found


def _why(op_type: str, version: str) -> str | None:
    try:
        if registry.find(op_type, version) is not None:
            return None
    except UnsupportedOpError as err:  # an op ovgather knows, in an opset without it
        return err.message
    kind = openvino_type(op_type)
    if kind is None:
        return f"no opset holds an op {op_type!r} (an extension would have to provide it)"
    number = registry.opset_number(version)
    if number is None or number > LAST_OPSET:
        return f"its version {version!r} names no opset of it (opset1 to opset{LAST_OPSET})"
    runs = OPSETS[kind]
    if any(first <= number <= last for first, last, _ in runs):
        return None
    return f"{version} has no {kind} (it is in opset{runs[0][0]} to opset{runs[-1][1]})"


@dataclass(frozen=True)
class UnreadLayer:
    """A layer OpenVINO's reader refuses, with the path id and name ``check`` gives it
    (``4/body/6`` inside a body) and why."""

    id: str
    name: str
    type: str
    version: str | None
    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "version": self.version,
                "line": self.line, "message": self.message}

    def words(self) -> str:
        """``odd (SuperReLU/opset17, id 1, line 3)``."""
        line = "" if self.line is None else f", line {self.line}"
        return f"{self.name} ({self.type}/{self.version}, id {self.id}{line})"


def unread_layers(G: Any, extension_types: Collection[str] = ()) -> list[UnreadLayer]:
    """Every layer of ``G`` (bodies too) OpenVINO's reader refuses, in file order: no walk,
    only the table, so a runtime proof knows before it starts that the model cannot be
    read, and says which layers."""
    from ..graph.bodies import walk_bodies

    graphs = [("", "", G), *[(ids, names, body) for ids, names, _, body in walk_bodies(G)]]
    found = [UnreadLayer(ids + str(n), names + attrs["name"], attrs["type"],
                         attrs.get("version"), attrs.get("line"), why)
             for ids, names, g in graphs for n, attrs in g._node.items()
             if (why := cannot_read(attrs["type"], attrs.get("version"), extension_types))
             is not None]
    return sorted(found, key=lambda u: (u.line is None, u.line or 0))
