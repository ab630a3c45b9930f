"""Shape rules run once per distinct question within one walk.

A model repeats itself: the 44 blocks of a Llama, the blocks of a generated chain, the
layers of every transformer ask the same rule the same question again and again (a
MatMul of ``[?,?,64]`` by ``[64,64]``). A rule's answer depends on nothing but the op, its
attribute text, its number of outputs and its input tensors (shape, element type,
value, ``const``, ``parts``), so the walk keeps each answer and gives it again when the
same question comes back.

The one input it cannot see up front is a Const whose data has not been read (a
``Tensor`` still ``pending``): reading every Const to ask would cost more than the rules
it saves. Such an input enters the question as "not read", and the first answer notes
which of those inputs the rule did read (a Reshape reads its target, a MatMul never reads
its weights): later questions read the values of those inputs, and only those, and ask
again with them. An answer that itself carries a value still to be read (a Convert of a
Const not read yet) belongs to its layer alone and is not kept.

The question holds each input's element type and its value exactly: ``(1, 2)`` of i64 and
``(1.0, 2.0)`` of f32 are two questions, and so are ``0.0`` and ``-0.0`` (Python finds
them equal). A question with a large value (kept packed, ``Tensor.packed``) or a packed
Const's (``Tensor.unpacked``) is not kept: the rule runs.
"""

from __future__ import annotations

from typing import Any

from ..ops.core.spec import Attrs, OpSpec
from ..ops.core.values import INT_TYPES, Tensor

__all__ = ["RuleMemo"]

#: stands in the question for the value of a Const not read yet
_NOT_READ = object()


class RuleMemo:
    """The answers of one walk's rules: by question, the output tensors (a list), or, for a
    question with inputs not read yet, the positions of those the rule read (a tuple)."""

    __slots__ = ("answers",)

    def __init__(self) -> None:
        self.answers: dict[tuple, Any] = {}

    def run(self, spec: OpSpec, op: str, version: str | None, data: dict[str, Any],
            n_outputs: int, ins: list[Tensor]) -> list[Tensor]:
        """``spec.rule`` on ``ins`` and the attribute text ``data``, or its earlier answer
        to the same question. The rule's errors pass through (and are not kept)."""
        asked = []
        for t in ins:
            if t._array is not None or t.unpacked is not None:  # a large value (rarely
                # asked twice, costly to keep) or a packed Const's (not in the question)
                return spec.rule(ins, Attrs.of(data, spec.version, n_outputs), None)
            asked.append((t.shape, t.etype, t.const, t.parts,
                          _NOT_READ if t._load is not None else _exactly(t)))
        question = (op, version, n_outputs, tuple(data.items()), tuple(asked))
        answers = self.answers
        try:
            found = answers.get(question)
        except TypeError:  # an attribute value no dict takes (a graph edited from Python)
            return spec.rule(ins, Attrs.of(data, spec.version, n_outputs), None)
        read: tuple[int, ...] = ()
        if type(found) is tuple:  # it depends on the values of inputs not read yet
            read = found
            for i in read:
                ins[i].value  # read it  # noqa: B018
            if any(ins[i]._array is not None for i in read):
                return spec.rule(ins, Attrs.of(data, spec.version, n_outputs), None)
            question = (question, tuple([_exactly(ins[i]) for i in read]))
            found = answers.get(question)
        if found is not None:
            return list(found)
        not_read = [i for i, t in enumerate(ins) if t._load is not None]
        out = spec.rule(ins, Attrs.of(data, spec.version, n_outputs), None)
        newly_read = tuple([i for i in not_read if ins[i]._load is None])
        for t in out:
            if t._load is not None:  # a value of this layer's own Const, read later
                return out
        if not newly_read:
            answers[question] = list(out)
        elif not read:  # the first answer: which inputs it read, then the answer by them
            answers[question] = newly_read
            if any(ins[i]._array is not None for i in newly_read):
                answers.pop(question)  # a large value was read: ask the rule each time
            else:
                answers[(question, tuple([_exactly(ins[i]) for i in newly_read]))] = list(out)
        # else: this time the rule read other inputs too (a path the values chose): the
        # question did not hold them, so the answer is not kept
        return out


def _exactly(t: Tensor):
    """The value of ``t`` as the question holds it: as it is for the integer types; for
    the others its ``repr`` too, since Python finds ``1 == 1.0`` and ``0.0 == -0.0`` and
    would take ``(1, 2)`` and ``(1.0, 2.0)`` for one question."""
    v = t._value
    if v is None or t.etype in INT_TYPES:
        return v
    return v, repr(v)
