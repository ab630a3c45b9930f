"""Model state: ReadValue-3/6 and Assign-3/6, the ops of stateful models (KV caches).

ReadValue-6 reads a variable whose shape and element type its attributes declare
(``variable_shape``, ``variable_type``): that is its output. Its optional input (the value
before the first Assign) must fit the variable: the variable's shape must *relax* the
input's (dynamic rank, or the same rank with every dim an interval holding the input's),
and its type must be ``dynamic`` or the input's; a variable that declares neither shape
nor type takes the input's. ReadValue-3 passes its input through, as both Assign versions
do. (Assign-6 also checks its input against the variable, which it names by
``variable_id`` only: a rule sees one layer, so that check is left to the ReadValue.)

>>> from ovgather.shapes import PartialShape as P
>>> relaxes(P.parse("[?,8,0..,64]"), P.parse("[1,8,0,64]"))
True
>>> relaxes(P.parse("[1,8]"), P.parse("[?,8]"))
False
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["relaxes", "SPECS"]


def relaxes(wide: PartialShape, narrow: PartialShape) -> bool:
    """True when every shape ``narrow`` allows, ``wide`` allows too."""
    if wide.dims is None:
        return True
    if narrow.dims is None or len(wide.dims) != len(narrow.dims):
        return False
    return all(w.lo <= n.lo and n.hi <= w.hi for w, n in zip(wide.dims, narrow.dims, strict=True))


def _read_value(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    if attrs.version < 6:
        return [Tensor(ins[0].shape, ins[0].etype)]
    shape = PartialShape.parse(attrs.text("variable_shape", "[...]"))
    etype = attrs.text("variable_type", "dynamic")
    if ins and shape.dims is None and etype == "dynamic":
        return [Tensor(ins[0].shape, ins[0].etype)]  # a variable that says nothing
    if ins:
        if not relaxes(shape, ins[0].shape):
            raise ShapeInferenceError(
                f"the variable shape must hold the shape of the initial value, but got "
                f"{shape} and {ins[0].shape}")
        if etype not in ("dynamic", "undefined", ins[0].etype) and ins[0].etype != "dynamic":
            raise ShapeInferenceError(
                f"the variable type must be dynamic or the initial value's, but got "
                f"{etype} and {ins[0].etype}")
    return [Tensor(shape, etype)]


def _assign(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    return [Tensor(ins[0].shape, ins[0].etype)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """Assign and ReadValue-3 pass their input's dims on; a ReadValue-6 holds whatever
    was assigned (fresh names, unless ``--symbols`` names its variable_id)."""
    from .core.symbolic import Sym
    if facts.op == "Assign" or attrs.version < 6:
        return [Sym(ins[0].dims)]
    return None


SPECS = specs_of({"ReadValue": _read_value, "Assign": _assign}, symbolic=_symbolic)
