"""OpenVINO's element types: the one table ovgather keeps of them.

Each row gives the name OpenVINO prints (``f32``, ``boolean``), the port ``precision``
an IR writes for it (``FP32``, ``BOOL``), its bit width (None for ``string``), its
numpy dtype (``raw``: none, the bytes are kept as ``uint8``) and whether it is a real
(floating-point) type. Everything that turns a precision into a type, a type into a
dtype, or asks whether a type may index, reads this table.

>>> element_type_name("FP32"), element_type_name("BOOL"), element_type_name("i64")
('f32', 'boolean', 'i64')
>>> is_integral_number("i32"), is_integral_number("FP16"), is_integral_number("nf4")
(True, False, True)
>>> ELEMENT_TYPES["u4"].bits, ELEMENT_TYPES["f16"].precision, numpy_dtype("i8")
(4, 'FP16', 'int8')
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

__all__ = [
    "ElementType",
    "ELEMENT_TYPES",
    "INT_TYPES",
    "FLOAT_VALUE_TYPES",
    "element_type_name",
    "is_integral_number",
    "is_real",
    "numpy_dtype",
    "precision_of",
]


class ElementType:
    """One element type; ``dtype`` is the numpy dtype (``uint8`` for raw bytes), built
    on first use so that reading the table imports no numpy."""

    def __init__(self, name: str, dtype: str, bits: int | None, precision: str,
                 real: bool = False) -> None:
        self.name = name
        self.raw = dtype == "raw"
        self.dtype_text = "u1" if self.raw else dtype
        self.bits = bits
        self.precision = precision
        self.real = real

    @cached_property
    def dtype(self) -> Any:
        import numpy as np

        return np.dtype(self.dtype_text)

    def __repr__(self) -> str:
        return f"ElementType({self.name!r})"


#: ``element_type`` text → ElementType (the precision strings OpenVINO's IR writer uses).
ELEMENT_TYPES: dict[str, ElementType] = {
    e.name: e
    for e in (
        ElementType("f64", "<f8", 64, "FP64", real=True),
        ElementType("f32", "<f4", 32, "FP32", real=True),
        ElementType("f16", "<f2", 16, "FP16", real=True),
        ElementType("bf16", "raw", 16, "BF16", real=True),
        ElementType("i64", "<i8", 64, "I64"),
        ElementType("i32", "<i4", 32, "I32"),
        ElementType("i16", "<i2", 16, "I16"),
        ElementType("i8", "i1", 8, "I8"),
        ElementType("u64", "<u8", 64, "U64"),
        ElementType("u32", "<u4", 32, "U32"),
        ElementType("u16", "<u2", 16, "U16"),
        ElementType("u8", "u1", 8, "U8"),
        ElementType("boolean", "?", 8, "BOOL"),
        ElementType("u1", "raw", 1, "BIN"),
        ElementType("u2", "raw", 2, "U2"),
        ElementType("u3", "raw", 3, "U3"),
        ElementType("u4", "raw", 4, "U4"),
        ElementType("u6", "raw", 6, "U6"),
        ElementType("i4", "raw", 4, "I4"),
        ElementType("nf4", "raw", 4, "NF4"),
        ElementType("f4e2m1", "raw", 4, "F4E2M1", real=True),
        ElementType("f8e4m3", "raw", 8, "F8E4M3", real=True),
        ElementType("f8e5m2", "raw", 8, "F8E5M2", real=True),
        ElementType("f8e8m0", "raw", 8, "F8E8M0", real=True),
        ElementType("string", "raw", None, "STRING"),
    )
}

#: The integer types whose small tensors the walk tracks as values (shape arithmetic).
INT_TYPES = frozenset({"i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8", "u1", "u4", "i4"})

#: The real types whose small constant tensors the walk tracks too (a shape computed
#: through Convert -> Divide -> Floor -> Convert, as Swin's window partition does).
FLOAT_VALUE_TYPES = frozenset({"f32", "f64", "f16", "bf16"})

#: Precision text (upper case) → name, with the spellings older IRs use.
_BY_PRECISION = {e.precision: e.name for e in ELEMENT_TYPES.values()}
_BY_PRECISION.update({"BOOLEAN": "boolean", "UNSPECIFIED": "dynamic", "UNDEFINED": "dynamic",
                      "DYNAMIC": "dynamic", "U1": "u1"})


def element_type_name(text: str | None) -> str:
    """OpenVINO's name for an IR precision or ``element_type`` text (``dynamic`` for
    none); an unknown text is kept, lower-cased."""
    if text is None:
        return "dynamic"
    t = text.strip()
    return _BY_PRECISION.get(t.upper(), t.lower())


def precision_of(name: str) -> str:
    """The port ``precision`` an IR writes for element type ``name`` (``f32`` → ``FP32``)."""
    e = ELEMENT_TYPES.get(name)
    return e.precision if e is not None else name.upper()


def is_real(text: str) -> bool:
    """OpenVINO's ``is_real()``: the floating-point types."""
    e = ELEMENT_TYPES.get(element_type_name(text))
    return e is not None and e.real


#: is_integral_number per text seen so far (the shape rules ask per layer).
_INTEGRAL: dict[str, bool] = {}


def is_integral_number(text: str) -> bool:
    """OpenVINO's ``is_integral_number()``: every type but the real ones and boolean.

    So ``dynamic``, ``string`` and the packed ``u1``/``u4``/``nf4`` count as integral, as
    they do in OpenVINO 2026.4.1.
    """
    known = _INTEGRAL.get(text)
    if known is None:
        name = element_type_name(text)
        known = _INTEGRAL[text] = not is_real(name) and name != "boolean"
    return known


def numpy_dtype(name: str) -> str | None:
    """The numpy dtype name of element type ``name`` (``i32`` → ``int32``), None when
    numpy has none (packed, bf16, f8, string)."""
    e = ELEMENT_TYPES.get(element_type_name(name))
    if e is None or e.raw:
        return None
    return e.dtype.name
