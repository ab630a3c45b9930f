"""Find the spec of a layer's op by its ``type`` and ``version`` text.

An IR names an opset (``version="opset8"``), not an op version: the registry turns the
pair into the :class:`~ovgather.ops.spec.OpSpec` that the opset holds. A GatherND
written as ``opset5`` folds its batch dims, the same layer written as ``opset8`` keeps
them. An opset that does not hold the op is an error, as it is for OpenVINO's reader.

>>> find("GatherND", "opset7").name, find("GatherND", "opset8").name
('GatherND-5', 'GatherND-8')
>>> find("Gather", "opset7").version, find("GatherElements", "opset16").version
(7, 6)
>>> find("MyCustomOp", "opset1") is None
True
>>> find("GatherND", "opset4")
Traceback (most recent call last):
...
ovgather.errors.UnsupportedOpError: opset4 has no GatherND (it is in opset5 to opset16)
"""

from __future__ import annotations

from functools import cache

from ..errors import UnsupportedOpError
from .spec import OpSpec

__all__ = ["find", "spec", "specs", "known_types", "family", "opset_number", "op_version"]


@cache
def _file_of() -> dict[str, str]:
    """Op type → the op file that holds its specs (from the package's index)."""
    from . import OP_MODULES

    return {t: name for name, types in OP_MODULES.items() for t in types}


@cache
def _versions(op_type: str) -> tuple[OpSpec, ...]:
    """The specs of ``op_type``, in opset order; its op file is imported on first use."""
    name = _file_of().get(op_type)
    if name is None:
        return ()
    from . import op_module

    found = [s for s in op_module(name).SPECS if s.type == op_type]
    return tuple(sorted(found, key=lambda s: s.since))


def opset_number(opset: str | None) -> int | None:
    """``"opset8"`` → 8; None for anything that is not ``opsetN``."""
    if not isinstance(opset, str) or not opset.startswith("opset"):
        return None
    digits = opset[5:]
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) < 10 else None


#: (type, version text) -> spec, None (unknown type) or the error: the walk's hot path.
_FOUND: dict[tuple[str, str | None], OpSpec | UnsupportedOpError | None] = {}


def find(op_type: str, opset: str | None) -> OpSpec | None:
    """The spec of ``op_type`` in the opset named ``opset`` (IR ``version`` text).

    None for op types ovgather does not know; UnsupportedOpError when the op is known
    but ``opset`` does not hold it (or is not an ``opsetN`` name).
    """
    key = (op_type, opset)
    found = _FOUND.get(key, _FOUND)
    if found is _FOUND:
        found = _FOUND[key] = _lookup(op_type, opset)
    if isinstance(found, UnsupportedOpError):
        raise UnsupportedOpError(found.message)
    return found


def _lookup(op_type: str, opset: str | None) -> OpSpec | UnsupportedOpError | None:
    versions = _versions(op_type)
    if not versions:
        return None
    first, last = versions[0].since, versions[-1].until
    number = opset_number(opset)
    if number is None:
        return UnsupportedOpError(
            f"the version of a {op_type} layer must name an opset (opset{first} to "
            f"opset{last}), but got {opset!r}")
    for s in versions:
        if s.since <= number <= s.until:
            return s
    return UnsupportedOpError(f"{opset} has no {op_type} (it is in opset{first} to opset{last})")


def op_version(op_type: str, opset: str | None) -> int | None:
    """The op version ``opset`` selects for ``op_type`` (None: an op ovgather does not know)."""
    found = find(op_type, opset)
    return None if found is None else found.version


def spec(op_type: str, version: int) -> OpSpec:
    """The spec of ``op_type``-``version`` (``spec("GatherND", 5)``)."""
    for s in _versions(op_type):
        if s.version == version:
            return s
    known = ", ".join(str(s.version) for s in _versions(op_type)) or "none"
    raise UnsupportedOpError(f"{op_type} has versions {known}, not {version}")


def specs(op_type: str) -> tuple[OpSpec, ...]:
    """Every version of ``op_type`` ovgather knows, oldest first."""
    return _versions(op_type)


def known_types() -> list[str]:
    """The op types whose output shapes ovgather infers."""
    return sorted(_file_of())


@cache
def family(name: str) -> tuple[str, ...]:
    """The op types of a family (``"gather"``), in the order their files list them."""
    return tuple(dict.fromkeys(s.type for t in _file_of() for s in _versions(t)
                               if s.family == name))
