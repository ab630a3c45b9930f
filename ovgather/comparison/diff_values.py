"""What ``diff`` reads inside a layer: ``rt_info`` entries and the values of weights.

- :func:`rt_entries`: an ``<rt_info>`` XML text as ``{entry: value}``, an entry named by
  its ``name`` attribute (else its tag), nested entries joined by ``/``, the value its
  ``value`` attribute (else its other attributes, then its text): ``fused_names`` ->
  ``"a,b"``, ``decompression`` -> ``""``.
- :func:`value_change`: the ``weights`` change of two Consts whose bytes differ: their
  element types and shapes, and for two of one shape and a numeric type the largest
  absolute and relative difference (numpy, in slices of a bounded size).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

__all__ = ["rt_entries", "value_change"]

#: elements compared at a time (two float64 slices of this many stay below 64 MB)
SLICE = 1 << 22


@lru_cache(maxsize=4096)
def _entries(text: str) -> tuple[tuple[str, str], ...]:
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return (("(text)", text),)
    out: list[tuple[str, str]] = []

    def walk(el: Any, prefix: str) -> None:
        for child in el:
            attrs = dict(child.attrib)
            key = prefix + attrs.pop("name", child.tag)
            if "value" in attrs:
                value = attrs.pop("value")
                attrs.pop("version", None)
            else:
                attrs.pop("version", None)
                value = ", ".join(f"{k}={v}" for k, v in attrs.items())
            if child.text and child.text.strip():
                value = (value + " " if value else "") + child.text.strip()
            if len(child):
                if value:
                    out.append((key, value))
                walk(child, key + "/")
            else:
                out.append((key, value))

    walk(root, "")
    return tuple(out)


def rt_entries(text: str | None) -> dict[str, str]:
    """``{entry: value}`` of an ``<rt_info>`` text (empty for None); a repeated entry name
    gets ``#2``, ``#3``... ."""
    if not text:
        return {}
    out: dict[str, str] = {}
    for key, value in _entries(text):
        k, n = key, 1
        while k in out:
            n += 1
            k = f"{key}#{n}"
        out[k] = value
    return out


def _shape_text(shape: Any) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, str):
        return f"[{shape}]"
    return "[" + ",".join(map(str, shape)) + "]"


def value_change(GA: Any, a: str, GB: Any, b: str, ca: tuple, cb: tuple) -> dict[str, Any]:
    """The ``weights`` change of Const ``a`` of ``GA`` and Const ``b`` of ``GB`` (contents
    ``ca``/``cb``: element type, shape, digest, which differ)."""
    from ..ir import const_value

    change: dict[str, Any] = {"what": "weights", "where": None,
                              "a": f"{ca[0]} {_shape_text(ca[1])}",
                              "b": f"{cb[0]} {_shape_text(cb[1])}",
                              "max_abs": None, "max_rel": None}
    if ca[1] != cb[1]:
        change["note"] = "shape changed"
        return change
    try:
        va, vb = const_value(GA, a), const_value(GB, b)
    except Exception:  # unreadable bytes were named when hashed; here only the words
        change["note"] = "values differ"
        return change
    if va.dtype.kind not in "biuf" or vb.dtype.kind not in "biuf" or va.shape != vb.shape:
        change["note"] = "bytes differ"
        return change
    max_abs, max_rel = _largest(va.reshape(-1), vb.reshape(-1))
    if max_abs == 0.0 and ca[0] != cb[0]:
        change["note"] = "same values, element type changed"
    if not math.isfinite(max_abs):
        change["note"] = "values differ (NaN in one)"
    elif not math.isfinite(max_rel):  # a value of B is 0 where A's is not
        change["note"] = "values differ (B is 0 where A is not)"
        change["max_abs"] = max_abs
    else:
        change["max_abs"], change["max_rel"] = max_abs, max_rel
    return change


def _largest(va: Any, vb: Any) -> tuple[float, float]:
    """The largest |a - b| and |a - b| / |b| (0 where both are 0; inf where only b is
    0), NaN where either value is NaN."""
    import numpy as np

    max_abs = max_rel = 0.0
    for start in range(0, va.size, SLICE):
        x = va[start:start + SLICE].astype(np.float64)
        y = vb[start:start + SLICE].astype(np.float64)
        d = np.abs(x - y)
        if np.isnan(d).any():
            return float("nan"), float("nan")
        if d.size:
            max_abs = max(max_abs, float(d.max()))
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(d == 0, 0.0, d / np.abs(y))
            max_rel = max(max_rel, float(rel.max()))
    return max_abs, max_rel
