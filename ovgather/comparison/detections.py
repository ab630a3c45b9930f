"""``compare`` of a DetectionOutput: two lists of detections, compared as sets.

A DetectionOutput gives rows ``[image_id, label, score, x_min, y_min, x_max, y_max]`` in
a ``[1, 1, N, 7]`` tensor, the first row whose image id is -1 ending the list. Their
order and how many there are follow the scores (sorted, then cut at ``keep_top_k``): a
score that moves in the fourth digit reorders the rows, and comparing them element by
element ("572 of 1400 elements differ") says nothing about the detections. So each
image's detections of A and B are matched as sets:

- by class, greedily by score: each detection of A, the highest score first, takes the
  detection of B of its class not yet taken that overlaps it most, when that overlap is
  at least :data:`~ovgather.validate.row_values.IOU` (the intersection over union of
  the boxes, the threshold of reshape's row proof);
- a matched pair then agrees when its score moves by at most ``atol + rtol·|B|`` or
  :data:`SCORE_ATOL`, whichever is larger, and each box corner by at most ``atol +
  rtol·|B|`` or :data:`BOX_SHARE` of the box's longer side, whichever is larger (an
  FP16 model moves both a little; the defaults of ``compare`` would fail it on that);
- the output is ``ok`` when every detection scoring at least :data:`MIN_SCORE` in A or
  in B is matched, and agrees with its partner. Detections below that score may come and
  go (they sit at the op's own confidence threshold or its ``keep_top_k`` cut): they are
  counted, not failed.

``max_abs`` and ``max_rel`` are the largest moves of a matched pair's score or box; the
message counts the detections matched and those only in A or only in B.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validate.row_values import IOU

__all__ = ["detection_verdict", "match_sets", "image_rows", "MIN_SCORE", "SCORE_ATOL",
           "BOX_SHARE"]

#: Every detection at this score or above must be matched for the output to be ``ok``.
MIN_SCORE = 0.5
#: How far a matched detection's score may move at the least (beyond atol + rtol·|B|).
SCORE_ATOL = 0.01
#: How far a matched box corner may move at the least: this share of the box's longer side.
BOX_SHARE = 0.05


def image_rows(out: np.ndarray) -> dict[int, np.ndarray]:
    """The detections of a DetectionOutput ``[1, 1, N, 7]`` by image id: the rows up to
    the first image id -1."""
    rows = np.asarray(out, np.float64).reshape(-1, 7)
    end = np.flatnonzero(rows[:, 0] < 0)
    rows = rows[:end[0]] if end.size else rows
    return {int(k): rows[rows[:, 0] == k] for k in np.unique(rows[:, 0])}


def _iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The IoU of ``box`` [4] with each of ``boxes`` [n, 4] (corners x0, y0, x1, y1)."""
    w = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    h = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = w * h
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = area + areas - inter
    same = np.all(np.isclose(boxes, box), axis=1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1), same)


def match_sets(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """The pairs ``(row of a, row of b)`` of one image's detections: the class equal,
    greedily by A's score, each taking the free detection of B that overlaps it most at
    IoU >= :data:`IOU`."""
    free = np.ones(len(b), bool)
    pairs = []
    for k in np.argsort(-a[:, 2], kind="stable"):
        ok = free & (b[:, 1] == a[k, 1])
        if not ok.any():
            continue
        iou = np.where(ok, _iou(a[k, 3:], b[:, 3:]) if len(b) else 0.0, -1.0)
        best = int(np.argmax(iou))
        if iou[best] >= IOU:
            pairs.append((int(k), best))
            free[best] = False
    return pairs


def _words(which: str, image: int, row: np.ndarray) -> str:
    box = ", ".join(f"{v:.3g}" for v in row[3:])
    return (f"a detection of class {int(row[1])} (score {row[2]:.3g}, box [{box}]) in "
            f"image {image} of {which} has no match")


def detection_verdict(res: Any, x: np.ndarray, y: np.ndarray, rtol: float, atol: float
                      ) -> Any:
    """``res`` (an ``OutputComparison``) filled for the DetectionOutputs ``x`` (A) and
    ``y`` (B): status, the largest moves of matched pairs and the counts in the message."""
    rows_a, rows_b = image_rows(x), image_rows(y)
    matched = only_a = only_b = 0
    max_abs = max_rel = 0.0
    failures: list[str] = []
    for image in sorted(set(rows_a) | set(rows_b)):
        a = rows_a.get(image, np.zeros((0, 7)))
        b = rows_b.get(image, np.zeros((0, 7)))
        pairs = match_sets(a, b)
        matched += len(pairs)
        taken_a, taken_b = {p[0] for p in pairs}, {p[1] for p in pairs}
        for which, rows, taken in (("A", a, taken_a), ("B", b, taken_b)):
            lost = [k for k in range(len(rows)) if k not in taken]
            if which == "A":
                only_a += len(lost)
            else:
                only_b += len(lost)
            failures += [_words(which, image, rows[k]) for k in lost
                         if rows[k, 2] >= MIN_SCORE]
        for i, j in pairs:
            gap = np.abs(a[i, 2:] - b[j, 2:])
            size = np.abs(b[j, 2:])
            max_abs = max(max_abs, float(gap.max()))
            with np.errstate(invalid="ignore", divide="ignore"):
                rel = np.where(size > 0, gap / np.where(size > 0, size, 1), 0.0)
            max_rel = max(max_rel, float(rel.max()))
            side = max(b[j, 5] - b[j, 3], b[j, 6] - b[j, 4])
            bound = atol + rtol * size
            bound = np.maximum(bound, [SCORE_ATOL] + [BOX_SHARE * side] * 4)
            if max(a[i, 2], b[j, 2]) >= MIN_SCORE and np.any(gap > bound):
                failures.append(f"a detection of class {int(a[i, 1])} in image {image} "
                                f"(score {a[i, 2]:.3g} in A, {b[j, 2]:.3g} in B) moves by "
                                f"{float(gap.max()):.3g} in score or box")
    res.max_abs, res.max_rel = max_abs, max_rel
    counts = (f"detections as sets (class, IoU >= {IOU:g}): {matched} matched, {only_a} "
              f"only in A, {only_b} only in B")
    if failures:
        res.status = "differs"
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        res.message = f"{counts}; at score >= {MIN_SCORE:g}, {failures[0]}{more}"
    elif not matched and not only_a and not only_b:
        res.status = "nothing proven"
        res.message = ("no detection in either model: equal, but that proves nothing; feed "
                       "inputs that exercise the model (--input NAME=FILE.npy, or inputs= "
                       "in Python) or accept it (--allow-unproven)")
    else:
        res.message = f"{counts}; every detection at score >= {MIN_SCORE:g} matches"
    return res
