"""ConvertPromoteTypes-14: both inputs converted to one common element type; each output
keeps its input's shape.

The common type is OpenVINO's: the same type, or the other one next to ``boolean``; a real
and an integer give the real (safely only when it has twice the integer's bits); two
integers of mixed sign a signed integer of twice the unsigned bits (``u64`` only with
``promote_unsafe``, to ``u64_integer_promotion_target``); otherwise the wider one. With
``pytorch_scalar_promotion`` a scalar takes the other input's type (safely only when that
holds it), and a dynamic rank leaves the type ``dynamic``. ``promote_unsafe`` also joins
``f8e4m3``/``f8e5m2`` into ``f16`` and ``bf16``/``f16`` into ``f32``. Other pairs are an
error.

>>> from ovgather.shapes import PartialShape as P
>>> common_type("u8", "i16", [P.parse("[2]"), P.parse("[2]")], False, False, "f32")
'i16'
"""

from __future__ import annotations

from ..element_types import ELEMENT_TYPES
from ..errors import ShapeInferenceError
from ..shapes import PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["common_type", "SPECS"]

SUPPORTED = frozenset("dynamic boolean f16 f32 f64 i4 i8 i16 i32 i64 u1 u4 u8 u16 u32 u64 "
                      "f8e4m3 f8e5m2 bf16".split())
SPECIAL = ({"f8e4m3", "f8e5m2"}, "f16"), ({"bf16", "f16"}, "f32")


def _signed(t: str) -> bool:
    return ELEMENT_TYPES[t].real or t.startswith("i")


def _fail(rule: str, a: str, b: str) -> ShapeInferenceError:
    return ShapeInferenceError(f"{rule}, but got {a} and {b}")


def _mixed_sign(a: str, b: str, unsafe: bool, u64_target: str) -> str:
    unsigned, signed = (b, a) if _signed(a) else (a, b)
    ubits, sbits = ELEMENT_TYPES[unsigned].bits, ELEMENT_TYPES[signed].bits
    if ubits <= 32 and (unsafe or ubits * 2 <= sbits):
        bits = max(ubits * 2, sbits)
        if bits not in (4, 8, 16, 32, 64):
            raise _fail("no signed integer has the bits needed", a, b)
        return f"i{bits}"
    if not unsafe:
        raise _fail("an unsigned integer cannot be safely promoted to a signed one", a, b)
    return u64_target


def common_type(a: str, b: str, shapes: list[PartialShape], unsafe: bool, pytorch: bool,
                u64_target: str) -> str:
    if a not in SUPPORTED or b not in SUPPORTED:
        raise _fail("ConvertPromoteTypes does not take these element types", a, b)
    if "dynamic" in (a, b):
        return "dynamic"
    if a == b or b == "boolean":
        return a
    if a == "boolean":
        return b
    ea, eb = ELEMENT_TYPES[a], ELEMENT_TYPES[b]
    if ea.real != eb.real:
        real, integer = (ea, eb) if ea.real else (eb, ea)
        if not unsafe and real.bits < integer.bits * 2:
            raise _fail("an integer cannot be safely promoted to a real type", a, b)
        return real.name
    if pytorch and None in (s.rank for s in shapes):
        return "dynamic"  # whether an input is a scalar is not known
    scalar = [s.rank == 0 for s in shapes]
    if pytorch and scalar[0] != scalar[1]:
        target, small = (eb, ea) if scalar[0] else (ea, eb)
        ok = ((_signed(target.name) == _signed(small.name) and target.bits >= small.bits)
              or (_signed(target.name) and not _signed(small.name)
                  and target.bits * 2 >= small.bits))
        if not (unsafe or ok):
            raise _fail("a scalar cannot be safely aligned to the other input", a, b)
        return target.name
    if _signed(a) != _signed(b):
        return _mixed_sign(a, b, unsafe, u64_target)
    if ea.bits != eb.bits:
        return a if ea.bits >= eb.bits else b
    for pair, target in SPECIAL if unsafe else ():
        if {a, b} <= pair:
            return target
    raise _fail("ConvertPromoteTypes has no common type for these inputs", a, b)


def _convert_promote(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None):
    shapes = [t.shape for t in ins[:2]]
    etype = common_type(ins[0].etype, ins[1].etype, shapes, attrs.bool("promote_unsafe", False),
                        attrs.bool("pytorch_scalar_promotion", False),
                        attrs.text("u64_integer_promotion_target", "f32"))
    return [Tensor(shapes[0], etype), Tensor(shapes[1], etype)]


SPECS = specs_of({"ConvertPromoteTypes": _convert_promote})
