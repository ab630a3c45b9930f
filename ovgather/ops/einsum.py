"""Einsum-7: the output shape an Einsum equation spells from its inputs' labelled dims.

The equation is ``subscript,subscript,...->output`` (spaces ignored); a subscript is
letters (case counts) with at most one ``...`` standing for the dims no letter names. An
equation without ``->`` outputs the letters that occur in one input only, sorted, after
``...`` when some input has one. Each input's rank must equal its number of letters (or be
at least that with a ``...``).

A letter repeated inside one input names one dim: its dims must be compatible (their
merge is the letter's dim there). Across inputs a letter's dims broadcast as numpy does
(``1`` stretches), and so do the ``...`` dims. An input of dynamic rank says nothing (its
letters are ``?`` when nothing else names them); one with a ``...`` makes an output
with a ``...`` a dynamic rank, and OpenVINO then checks no later input.
An output letter no input has is an error; an output ``...`` that no input has is empty.

>>> from ovgather.shapes import PartialShape as P
>>> str(einsum_shape("...ij,...jk", [P.parse("[5,2,3]"), P.parse("[3,4]")]))
'[5,2,4]'
>>> str(einsum_shape("ab,ab->ab", [P.parse("[1,3]"), P.parse("[2,?]")]))
'[2,3]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import broadcast_dims, broadcast_shapes
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Expr, Facts, Sym

__all__ = ["einsum_shape", "labels_of", "SPECS"]

ELLIPSIS = "..."


def labels_of(subscript: str, where: str = "an input") -> list[str]:
    """The labels of one subscript: its letters and at most one ``...``.

    >>> labels_of("a...B")
    ['a', '...', 'B']
    """
    labels, i = [], 0
    while i < len(subscript):
        if subscript.startswith(ELLIPSIS, i) and ELLIPSIS not in labels:
            labels.append(ELLIPSIS)
            i += 3
            continue
        if not (subscript[i].isascii() and subscript[i].isalpha()):
            raise ShapeInferenceError(
                f"the subscript of {where} must be letters with at most one '...', but got "
                f"'{subscript}'")
        labels.append(subscript[i])
        i += 1
    return labels


def _parse(equation: str) -> tuple[list[list[str]], list[str]]:
    equation = "".join(equation.split())
    left, arrow, right = equation.partition("->")
    inputs = [labels_of(s) for s in left.split(",")]
    if arrow:
        return inputs, labels_of(right, "the output")
    once = sorted(lab for i, labels in enumerate(inputs) for lab in labels
                  if lab != ELLIPSIS and not any(lab in other for j, other in enumerate(inputs)
                                                 if j != i))
    return inputs, ([ELLIPSIS] if any(ELLIPSIS in x for x in inputs) else []) + once


def _input_dims(labels: list[str], shape: PartialShape) -> tuple[dict, tuple]:
    """One input's dim per letter (repeats merged) and its ``...`` dims."""
    dims, n = shape.dims, len(labels)
    has_ellipsis = ELLIPSIS in labels
    if len(dims) < n - has_ellipsis or (not has_ellipsis and len(dims) != n):
        raise ShapeInferenceError(
            f"an input's rank must match the letters of its subscript "
            f"('{''.join(labels)}'), but got {shape}")
    own: dict[str, Dimension] = {}
    ellipsis: tuple[Dimension, ...] = ()
    at = 0
    for label in labels:
        if label == ELLIPSIS:
            width = len(dims) - n + 1
            ellipsis, at = dims[at:at + width], at + width
            continue
        d = dims[at] if label not in own else own[label].merge(dims[at])
        if d is None:
            raise ShapeInferenceError(
                f"a letter repeated in one input must name compatible dims, but '{label}' "
                f"names {own[label]} and {dims[at]}")
        own[label], at = d, at + 1
    return own, ellipsis


def einsum_shape(equation: str, shapes: list[PartialShape]) -> PartialShape:
    inputs, output = _parse(equation)
    if len(inputs) != len(shapes):
        raise ShapeInferenceError(
            f"the equation must have one subscript per input ({len(shapes)}), but has "
            f"{len(inputs)}")
    known: dict[str, Dimension] = {}
    ellipsis: PartialShape | None = None
    for labels, shape in zip(inputs, shapes, strict=True):
        if shape.dims is None:
            if ELLIPSIS in labels and ELLIPSIS in output:
                return PartialShape.dynamic()  # OpenVINO looks at no further input
            for label in labels:
                known.setdefault(label, DYNAMIC)
            continue
        own, dots = _input_dims(labels, shape)
        for label, d in own.items():
            known[label] = broadcast_dims(known[label], d) if label in known else d
        if ELLIPSIS in labels:
            dots = PartialShape.of(dots)
            ellipsis = dots if ellipsis is None else broadcast_shapes(ellipsis, dots)
    out: list[Dimension] = []
    for label in output:
        if label == ELLIPSIS:
            out.extend(ellipsis.dims if ellipsis is not None else ())
        elif label in known:
            out.append(known[label])
        else:
            raise ShapeInferenceError(
                f"every output letter must name a dim of some input, but '{label}' names none")
    return PartialShape.of(tuple(out))


def _einsum(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    etypes = {t.etype for t in ins} - {"dynamic"}
    if len(etypes) > 1 or etypes & {"boolean", "string"}:
        raise ShapeInferenceError(
            f"the inputs must share one numeric element type, but got {sorted(etypes)}")
    etype = next(iter(etypes), "dynamic")
    return [Tensor(einsum_shape(attrs.text("equation", ""), [t.shape for t in ins]), etype)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """Each output letter's dim: a letter repeated in one input names equal dims, one
    letter in several inputs broadcasts (no ``...``)."""
    from .core.symbolic import Sym, broadcast

    inputs, output = _parse(attrs.text("equation", ""))
    if any(ELLIPSIS in labels for labels in (*inputs, output)) or \
            any(s.dims is None or len(s.dims) != len(labels) for s, labels in zip(ins, inputs,
                                                                                 strict=True)):
        return None
    known: dict[str, Expr] = {}
    for labels, s in zip(inputs, ins, strict=True):
        own: dict[str, Expr] = {}
        for label, d in zip(labels, s.dims, strict=True):
            own[label] = facts.equal(own[label], d) if label in own else d
        for label, d in own.items():
            known[label] = broadcast(known[label], d, facts) if label in known else d
    return [Sym([known[label] for label in output])]


SPECS = specs_of({"Einsum": _einsum}, symbolic=_symbolic)
