"""What ``compare`` checks of the user's arrays before any model runs, and how it names the
two models in its words.

- :func:`distinct_names`: the two files by the shortest path suffixes that tell them apart
  (``a/model.xml`` and ``b/model.xml`` in a zoo where every file is ``model.xml``);
- :func:`check_aliases`: one input fed twice under two of its names is refused;
- :func:`check_indices`: an integer array given for an input whose values reach the
  indices of a gather (or an embedding bag) of a known table size must lie inside that
  table (negative indices counting from the end): an index far out of range crashes the
  CPU plugin, so it is refused up front, naming the input, the range and the value found.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import CompareError

__all__ = ["distinct_names", "check_aliases", "check_indices", "fed_words"]


def distinct_names(a: str | None, b: str | None) -> tuple[str, str]:
    """The two paths by their shortest distinct suffixes (whole path parts); the basename
    when the basenames differ, the whole path when one suffix cannot tell them apart.

    >>> distinct_names("zoo/a/model.xml", "zoo/b/model.xml")
    ('a/model.xml', 'b/model.xml')
    >>> distinct_names("x/fp32.xml", "x/fp16.xml")
    ('fp32.xml', 'fp16.xml')
    """
    if a is None or b is None:
        return (os.path.basename(a) if a else "the model",
                os.path.basename(b) if b else "the model")
    pa, pb = _parts(a), _parts(b)
    for n in range(1, max(len(pa), len(pb)) + 1):
        sa, sb = "/".join(pa[-n:]), "/".join(pb[-n:])
        if sa != sb:
            return sa, sb
    if os.path.abspath(a) == os.path.abspath(b) or a == b:
        return pa[-1], pb[-1]  # one file twice: its name says it
    return a, b


def _parts(path: str) -> list[str]:
    return [p for p in os.path.normpath(path).replace(os.sep, "/").split("/") if p] or [path]


def check_aliases(names: Sequence[str], position: Mapping[str, int], shown: Sequence[str],
                  file: str | None) -> None:
    """CompareError when two of ``names`` (the ``--input`` names, in order) find one input
    (``position``: name -> input position; ``shown``: each input's name)."""
    first: dict[int, str] = {}
    for name in names:
        i = position.get(name)
        if i is None:
            continue
        if i in first:
            raise CompareError(
                f"--input feeds each input once, but '{first[i]}' and '{name}' are two "
                f"names of one input ('{shown[i]}'); give it one array", file=file)
        first[i] = name


def check_indices(arrays: Mapping[int, np.ndarray], names: Sequence[str],
                  bounds: Sequence[Sequence[tuple[int, int, str] | None]],
                  file: str | None) -> None:
    """CompareError for the first given array (by input position) holding a value outside
    the ``[low, high)`` every model's ``bounds`` allow it."""
    for i, array in arrays.items():
        if array.dtype.kind not in "iu" or array.size == 0:
            continue
        found = [b[i] for b in bounds if i < len(b) and b[i] is not None]
        if not found:
            continue
        low = max(lo for lo, _, _ in found)
        high, why = min((hi, w) for _, hi, w in found)
        flat = array.reshape(-1)
        for start in range(0, flat.size, 1 << 20):
            part = flat[start:start + (1 << 20)].astype(np.int64, copy=False) \
                if array.dtype != np.uint64 else flat[start:start + (1 << 20)]
            bad = np.flatnonzero((part < low) | (part >= high)) if array.dtype != np.uint64 \
                else np.flatnonzero(part >= max(high, 0))
            if bad.size:
                at = int(bad[0]) + start
                where = [int(k) for k in np.unravel_index(at, array.shape)]
                raise CompareError(
                    f"input '{names[i]}' holds indices into {why}: its values must lie in "
                    f"[{low},{high}), but the array given holds {flat[at]} at {where}; "
                    "refused before running (an index out of range can crash the CPU "
                    "plugin)", file=file)


def fed_words(names: Sequence[str], shapes: Sequence[str], values: Sequence[str]) -> str:
    """The inputs a run was fed, in a few words: ``x[2,8] (given), idx[3] (random …)``."""
    return ", ".join(f"{n}{s} ({v})" for n, s, v in zip(names, shapes, values, strict=True))

