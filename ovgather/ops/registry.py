"""Which op version an IR ``version`` string selects, per op type.

The IR reader stores ``op_version(type, version)`` on every node (graph.py schema), so
that the shape rules pick the right semantics: a GatherND written as ``opset5`` folds its
batch dims, the same layer written as ``opset8`` keeps them (openvino-facts.md §1). An
opset that does not contain the op is an error, as it is for OpenVINO's IR reader.

>>> op_version("GatherND", "opset7"), op_version("GatherND", "opset8")
(5, 8)
>>> op_version("Gather", "opset7"), op_version("GatherElements", "opset16")
(7, 6)
>>> op_version("Relu", "opset1") is None
True
"""

from __future__ import annotations

from ..errors import UnsupportedOpError

__all__ = [
    "OP_VERSIONS",
    "LAST_OPSET",
    "opset_number",
    "op_version",
    "element_type_name",
    "is_integral_number",
]

#: The highest opset OpenVINO 2026.4.1 registers (opset17 only adds ErfInv).
LAST_OPSET = 17

#: op type -> list of (first opset, op version); each row holds until the next one.
#: An op is absent before its first row and after ``last`` (see ``_LAST``).
OP_VERSIONS: dict[str, list[tuple[int, int]]] = {
    "GatherND": [(5, 5), (8, 8)],
    "Gather": [(1, 1), (7, 7), (8, 8)],
    "GatherElements": [(6, 6)],
}

#: op type -> the last opset that contains it (16 for the classic ops).
_LAST: dict[str, int] = {"GatherND": 16, "Gather": 16, "GatherElements": 16}


def opset_number(opset: str | None) -> int | None:
    """``"opset8"`` → 8; None for anything that is not ``opsetN``."""
    if not isinstance(opset, str) or not opset.startswith("opset"):
        return None
    digits = opset[5:]
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) < 10 else None


def op_version(op_type: str, opset: str | None) -> int | None:
    """The version of ``op_type`` that the IR ``version`` string ``opset`` selects.

    Returns None for op types this table does not know. Raises UnsupportedOpError when
    the op is known but ``opset`` does not contain it (or is not an ``opsetN`` string).

    >>> op_version("GatherND", "opset4")
    Traceback (most recent call last):
    ...
    ovgather.errors.UnsupportedOpError: opset4 has no GatherND (it is in opset5 to opset16)
    """
    rows = OP_VERSIONS.get(op_type)
    if rows is None:
        return None
    first, last = rows[0][0], _LAST[op_type]
    number = opset_number(opset)
    if number is None:
        raise UnsupportedOpError(
            f"the version of a {op_type} layer must name an opset (opset{first} to "
            f"opset{last}), but got {opset!r}"
        )
    if not first <= number <= last:
        raise UnsupportedOpError(
            f"{opset} has no {op_type} (it is in opset{first} to opset{last})"
        )
    version = rows[0][1]
    for since, ver in rows:
        if number >= since:
            version = ver
    return version


# -- element types ----------------------------------------------------------------------
#: OpenVINO's floating-point types: ``is_real()`` is true for exactly these.
REAL_TYPES = frozenset({"bf16", "f16", "f32", "f64", "f4e2m1", "f8e4m3", "f8e5m2", "f8e8m0"})

#: IR precision names that are not just the upper-case element type name.
_PRECISION_ALIASES = {
    "bool": "boolean",
    "bin": "u1",
    "unspecified": "dynamic",
    "undefined": "dynamic",
}


def element_type_name(name: str) -> str:
    """OpenVINO's lower-case element type name for an IR precision or element_type text.

    >>> element_type_name("FP32"), element_type_name("BOOL"), element_type_name("i64")
    ('f32', 'boolean', 'i64')
    """
    low = name.strip().lower()
    if low.startswith("fp"):
        return "f" + low[2:]
    return _PRECISION_ALIASES.get(low, low)


def is_integral_number(name: str) -> bool:
    """OpenVINO's ``is_integral_number()``: every type but the real ones and boolean.

    So ``dynamic``, ``string`` and the packed ``u1``/``u4``/``nf4`` count as integral, as
    they do in OpenVINO 2026.4.1 (openvino-facts.md §1).

    >>> is_integral_number("i32"), is_integral_number("FP16"), is_integral_number("boolean")
    (True, False, False)
    """
    known = _INTEGRAL.get(name)
    if known is None:
        t = element_type_name(name)
        known = _INTEGRAL[name] = t not in REAL_TYPES and t != "boolean"
    return known


#: is_integral_number per type text seen so far (the shape rules call it per layer).
_INTEGRAL: dict[str, bool] = {}
