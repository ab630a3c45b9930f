"""Sequence decoding: CTCGreedyDecoder-1, CTCGreedyDecoderSeqLen-6, CTCLoss-4 and
GatherTree-1.

- CTCGreedyDecoder: logits ``[T, N, C]`` and a sequence mask ``[T, N]`` give
  ``[N, T, 1, 1]``.
- CTCGreedyDecoderSeqLen: logits ``[N, T, C]`` and sequence lengths ``[N]`` give the
  decoded ``[N, T]`` and their lengths ``[N]``; the optional blank index is a scalar or
  holds one element.
- CTCLoss: logits ``[N, T, C]``, logit lengths ``[N]``, labels ``[N, T]``, label lengths
  ``[N]`` and an optional scalar blank index give one loss per batch, ``[N]``.
- GatherTree: step ids and parent ids of one 3-D shape ``[T, N, beam]``, ``[N]`` maximum
  lengths and a scalar end token give the step ids' shape.

Every shared dim is the merge of the dims the inputs give for it; dims that cannot merge
are an error.

>>> from ovgather.shapes import PartialShape as P
>>> [str(s) for s in ctc_seq_len_shapes(P.parse("[?,8,5]"), P.parse("[2..4]"))]
['[2..4,8]', '[2..4]']
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["ctc_seq_len_shapes", "SPECS"]

ONE = Dimension.static(1)


def _rank(shape: PartialShape, rank: int, name: str) -> None:
    if shape.rank not in (None, rank):
        raise ShapeInferenceError(f"the {name} must be {rank}-D, but got {shape}")


def _merge(d: Dimension, shape: PartialShape, i: int, what: str) -> Dimension:
    """``d`` merged with ``shape[i]`` (``d`` when the rank is unknown)."""
    if shape.dims is None:
        return d
    m = d.merge(shape.dims[i])
    if m is None:
        raise ShapeInferenceError(f"the inputs must agree on {what}, but got {d} and {shape}")
    return m


def _at(shape: PartialShape, i: int) -> Dimension:
    return DYNAMIC if shape.dims is None else shape.dims[i]


def ctc_seq_len_shapes(logits: PartialShape, lengths: PartialShape) -> list[PartialShape]:
    _rank(logits, 3, "logits")
    _rank(lengths, 1, "sequence lengths")
    batch = _merge(_at(logits, 0), lengths, 0, "the batch")
    return [PartialShape.of((batch, _at(logits, 1))), PartialShape.of((batch,))]


def _ctc_greedy(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    logits, mask = ins[0].shape, ins[1].shape
    _rank(logits, 3, "logits")
    _rank(mask, 2, "sequence mask")
    time = _merge(_at(logits, 0), mask, 0, "the time steps")
    batch = _merge(_at(logits, 1), mask, 1, "the batch")
    return [Tensor(PartialShape.of((batch, time, ONE, ONE)), ins[0].etype)]


def _ctc_greedy_seq_len(ins: list[Tensor], attrs: Attrs,
                        trace: Trace | None = None) -> list[Tensor]:
    if len(ins) > 2 and ins[2].shape.is_static and ins[2].shape.dims not in ((), (ONE,)):
        raise ShapeInferenceError(
            f"the blank index must be a scalar or hold one element, but got {ins[2].shape}")
    decoded, lengths = ctc_seq_len_shapes(ins[0].shape, ins[1].shape)
    return [Tensor(decoded, attrs.text("classes_index_type", "i32")),
            Tensor(lengths, attrs.text("sequence_length_type", "i32"))]


def _ctc_loss(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    names = ("logits", "logit lengths", "labels", "label lengths", "blank index")
    for t, rank, name in zip(ins, (3, 1, 2, 1, 0), names, strict=False):
        _rank(t.shape, rank, name)
    logits, labels = ins[0].shape, ins[2].shape
    batch = _merge(_at(logits, 0), ins[1].shape, 0, "the batch")
    batch = _merge(batch, labels, 0, "the batch")
    if labels.dims is not None and not labels.dims[1].compatible(_at(logits, 1)):
        raise ShapeInferenceError(
            f"the labels must have the logits' time steps, but got {labels} and {logits}")
    batch = _merge(batch, ins[3].shape, 0, "the batch")
    return [Tensor(PartialShape.of((batch,)), ins[0].etype)]


def _gather_tree(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    steps = ins[0].shape.merge(ins[1].shape)
    if steps is None or steps.rank not in (None, 3):
        raise ShapeInferenceError(f"step_ids and parent_idx must have one 3-D shape, but got "
                                  f"{ins[0].shape} and {ins[1].shape}")
    _rank(ins[2].shape, 1, "max_seq_len")
    if steps.dims is not None:
        batch = _merge(steps.dims[1], ins[2].shape, 0, "the batch")
        steps = PartialShape.of((steps.dims[0], batch, steps.dims[2]))
    _rank(ins[3].shape, 0, "end_token")
    return [Tensor(steps, ins[0].etype)]


SPECS = specs_of({"CTCGreedyDecoder": _ctc_greedy, "CTCGreedyDecoderSeqLen": _ctc_greedy_seq_len,
                  "CTCLoss": _ctc_loss, "GatherTree": _gather_tree})
