"""What reshape's row proof may compare, and how (validate/rows.py).

- Rows that cannot be told apart prove nothing: a rewrite that swaps or mixes two equal
  rows computes the same numbers. :func:`same_rows` names two rows equal in every batch
  input, and the proof re-draws its inputs, then says "nothing proven".
- An output downstream of a random op (RandomUniform, Multinomial) differs from row to
  row by design: :func:`output_facts` names the op, and the output is left out.
- An output downstream of a FakeQuantize on activations is computed on a grid of
  ``levels`` steps: a batch's kernels may round a value at a step's edge the other way
  than one row's, and the output then moves by a step or so (scaled by the layers after
  it). :func:`output_facts` finds the coarsest such grid, :func:`quantization_bound` says
  how far an output may move.
- A DetectionOutput is a list of ``[image_id, label, score, x_min, y_min, x_max, y_max]``
  rows whose length and order depend on the whole batch: :func:`match_detections` splits
  it by image and matches each image's detections with the original's as sets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["OutputFacts", "output_facts", "same_rows", "quantization_bound",
           "match_detections", "STEPS", "IOU", "RANDOM_OPS"]

#: The quantization steps an output downstream of a FakeQuantize may move by.
STEPS = 4
#: Two detections of one class match when their boxes overlap this much (IoU).
IOU = 0.5
#: Ops whose values are random: rows differ by design.
RANDOM_OPS = frozenset({"RandomUniform", "Multinomial"})
#: Ops whose output is a list whose length and order depend on the whole input.
LIST_OPS = frozenset({"DetectionOutput", "NonMaxSuppression", "MatrixNms", "MulticlassNms",
                      "NonZero", "ExperimentalDetectronDetectionOutput", "Proposal",
                      "ExperimentalDetectronGenerateProposalsSingleImage", "Unique"})


@dataclass
class OutputFacts:
    """What one output of the written model is: ``random`` (the random op upstream),
    ``made_by`` (the layer that makes it), ``detections`` (a DetectionOutput makes it),
    ``grid`` (the coarsest FakeQuantize on activations upstream: its name, ``levels``,
    ``step`` and ``relative`` step, the step per unit of its largest magnitude)."""

    random: str | None = None
    made_by: str = ""
    detections: bool = False
    grid: dict[str, Any] | None = None


def _label(node: Any) -> str:
    return f"{node.get_type_name()} '{node.get_friendly_name()}'"


def _downstream(starts: Sequence[Any]) -> dict[str, Any]:
    """Every node reached from ``starts`` (by unique name), each with the start it came
    from."""
    seen: dict[str, Any] = {}
    todo = [(n, n) for n in starts]
    while todo:
        node, start = todo.pop()
        if node.get_name() in seen:
            continue
        seen[node.get_name()] = start
        for out in node.outputs():
            todo += [(t.get_node(), start) for t in out.get_target_inputs()]
    return seen


def _grid(fq: Any) -> dict[str, Any] | None:
    """The step of a FakeQuantize's output grid, from its output range and levels."""
    try:
        lo, hi = (np.asarray(fq.input_value(k).get_node().get_data(), np.float64)
                  for k in (3, 4))
        levels = int(fq.get_attributes()["levels"])
    except (AttributeError, RuntimeError, KeyError, TypeError, ValueError):
        return None
    if levels < 2 or lo.size == 0 or hi.size == 0:
        return None
    lo, hi = np.broadcast_arrays(lo, hi)
    step = (hi - lo) / (levels - 1)
    top = np.maximum(np.maximum(np.abs(lo), np.abs(hi)), 1e-30)
    return {"fake_quantize": _label(fq), "levels": levels, "step": float(np.max(step)),
            "relative": float(np.max(step / top))}


def _nearest_grid(result: Any, live: Mapping[str, Any]) -> dict[str, Any] | None:
    """The coarsest grid among the FakeQuantizes on activations (those whose data depends
    on an input) nearest above ``result``."""
    best, seen, todo = None, set(), [result]
    while todo:
        node = todo.pop()
        if node.get_name() in seen:
            continue
        seen.add(node.get_name())
        for value in node.input_values():
            up = value.get_node()
            if up.get_name() not in live:  # constants, weights: the same at any batch
                continue
            if up.get_type_name() == "FakeQuantize":
                grid = _grid(up)
                if grid is not None and (best is None or grid["relative"] > best["relative"]):
                    best = grid
                continue
            todo.append(up)
    return best


def output_facts(model: Any) -> list[OutputFacts]:
    """:class:`OutputFacts` of each output of the ``openvino.Model``, in order."""
    ops = list(model.get_ordered_ops())
    random = _downstream([n for n in ops if n.get_type_name() in RANDOM_OPS])
    live = _downstream(list(model.get_parameters()))
    facts = []
    for result in model.get_results():
        maker = result.input_value(0).get_node()
        start = random.get(result.get_name())
        facts.append(OutputFacts(
            random=_label(start) if start is not None else None, made_by=_label(maker),
            detections=maker.get_type_name() == "DetectionOutput",
            grid=_nearest_grid(result, live)))
    return facts


def list_output(facts: OutputFacts) -> bool:
    """Whether the output is made by an op that lists what it finds in the whole input."""
    return facts.made_by.split(" ", 1)[0] in LIST_OPS


def same_rows(feed: Mapping[str, np.ndarray], rows: Sequence[str], batch: int
              ) -> tuple[int, int] | None:
    """Two rows (``r < s``) equal in every batch input of ``feed``, or None."""
    if not rows or batch < 2:
        return None
    for r in range(batch):
        for s in range(r + 1, batch):
            if all(np.array_equal(feed[n][r], feed[n][s]) for n in rows):
                return r, s
    return None


def quantization_bound(grid: Mapping[str, Any], scale: float) -> float:
    """How far an output whose largest magnitude is ``scale`` may move when the grid's
    values move by :data:`STEPS` steps: the steps, per unit of the grid's largest
    magnitude, times the output's."""
    return STEPS * float(grid["relative"]) * scale


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else float(np.allclose(a, b))


def _image_rows(out: np.ndarray, image: int) -> np.ndarray:
    """The detections of ``image`` in a DetectionOutput ``[1,1,N,7]``: rows up to the
    first image id -1, whose column 0 is the image."""
    rows = np.asarray(out, np.float64).reshape(-1, 7)
    end = np.flatnonzero(rows[:, 0] < 0)
    rows = rows[:end[0]] if end.size else rows
    return rows[rows[:, 0] == image]


def match_detections(got: np.ndarray, wants: Sequence[np.ndarray], atol: float
                     ) -> tuple[int, tuple[int, str] | None]:
    """Match each image's detections in the batch's DetectionOutput ``got`` with the
    original's on that image alone (``wants[r]``, image 0): by class, then the best
    overlap at IoU >= :data:`IOU`, then scores and boxes within ``atol``. The number
    matched, and the first image that does not match with why."""
    matched = 0
    for r, want in enumerate(wants):
        mine, theirs = _image_rows(got, r), _image_rows(want, 0)
        if len(mine) != len(theirs):
            return matched, (r, f"image {r} of the batch has {len(mine)} detections, the "
                                f"image alone {len(theirs)}")
        free = list(range(len(mine)))
        for det in theirs:
            best, at = 0.0, None
            for k in free:
                if mine[k, 1] == det[1] and (iou := _iou(mine[k, 3:], det[3:])) > best:
                    best, at = iou, k
            if at is None or best < IOU:
                return matched, (r, f"image {r}: a detection of class {int(det[1])} (score "
                                    f"{det[2]:.3g}) of the image alone has no match in the "
                                    f"batch (best IoU {best:.2f})")
            gap = float(np.max(np.abs(mine[at, 2:] - det[2:])))
            if gap > atol:
                return matched, (r, f"image {r}: a detection of class {int(det[1])} moves "
                                    f"by {gap:.3g} in score or box in the batch")
            free.remove(at)
            matched += 1
    return matched, None
