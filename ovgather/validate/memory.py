"""The memory estimate of runtime proof: bytes of the tensors a run will hold, counted
from ovgather's inferred shapes before anything is allocated, and the budget's text form
(``--memory-budget``)."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import Any

import networkx as nx
import numpy as np

from .. import graph as g
from ..element_types import element_type_name, numpy_dtype
from ..errors import OvgatherError
from ..shapes import INF, PartialShape

__all__ = ["DEFAULT_MEMORY_BUDGET", "parse_size", "size_text", "itemsize", "tensor_bytes",
           "inputs_bytes", "port_etype", "whole_run_bytes"]

#: The memory validate may hold for tensors at once, in bytes (``--memory-budget``): the
#: data, indices and outputs of the layers planned and not yet judged, counted three
#: times (ovgather's arrays; the runtime's own copies, converted to its precisions; the
#: output copied back and the reference's). A layer that needs more alone is
#: ``skipped``; otherwise planning waits until judged layers free enough.
DEFAULT_MEMORY_BUDGET = 2 << 30


def size_text(n: int) -> str:
    """Bytes in words: ``1.0 MiB``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def parse_size(text: str) -> int:
    """``2GiB``, ``512M``, ``1e9``, ``100000`` → bytes (units K, M, G, T of 1024, with
    or without ``iB``/``B``); ValueError when it is not a size.

    >>> parse_size("2GiB"), parse_size("512k"), parse_size("1000")
    (2147483648, 524288, 1000)
    """
    match = re.fullmatch(r"\s*([0-9]{1,15}(?:\.[0-9]{1,6})?)\s*([kmgt]?)(?:i?b)?\s*",
                         text.lower())
    if match is None:
        raise ValueError(f"a size is a number with an optional unit K, M, G or T (powers "
                         f"of 1024), such as 2GiB or 512M, but got '{text[:40]}'")
    number, unit = match.groups()
    return int(float(number) * (1 << (10 * " kmgt".index(unit or " "))))


def itemsize(etype: str) -> int:
    """Bytes per element of ``etype`` (8 when NumPy has no counterpart: never too few)."""
    name = numpy_dtype(etype)
    return np.dtype(name).itemsize if name else 8


def tensor_bytes(shape_text: str, etype: str | None, *, bounded: bool = True) -> int:
    """Bytes of a tensor whose inferred shape is ``shape_text``: a static shape's own,
    otherwise its upper bounds when ``bounded`` and all finite; 0 when unknown (the
    runtime then tells).

    >>> tensor_bytes("[2,3]", "f32"), tensor_bytes("[2,1..4]", "i64"), tensor_bytes("[?]", "u8")
    (24, 64, 0)
    """
    try:
        shape = PartialShape.parse(shape_text)
    except OvgatherError:
        return 0
    if shape.dims is None or any(d.hi >= INF for d in shape.dims):
        return 0
    if not bounded and not shape.is_static:
        return 0
    name = numpy_dtype(element_type_name(etype)) if etype else None
    return math.prod(d.hi for d in shape.dims) * (np.dtype(name).itemsize if name else 4)


def inputs_bytes(sizes: Mapping[str, Any], types: Mapping[str, str]) -> int:
    """Bytes of the Parameters at ``sizes`` (by friendly name), of element ``types``."""
    return sum(tensor_bytes(str(s), types.get(n)) for n, s in sizes.items())


def port_etype(G: nx.MultiDiGraph, node: str, port: g.Port) -> str:
    """The element type of an output port (a Parameter's or Const's own attribute first)."""
    attrs = G.nodes[node]
    if attrs["type"] in ("Parameter", "Const", "Constant"):
        et = (attrs.get("data") or {}).get("element_type")
        if et:
            return element_type_name(et)
    return element_type_name(port.get("precision") or None)


def whole_run_bytes(G: nx.MultiDiGraph, inferred: Mapping[str, list[PartialShape]],
                    wanted: Collection[str]) -> int:
    """Estimated bytes of one run of the whole model whose layers infer ``inferred``: the
    inputs, twice the outputs of the ``wanted`` layers (the runtime's and the copy handed
    back), and twice the largest other tensor (OpenVINO reuses memory between layers);
    shapes that are not static count as 0."""
    total = biggest = 0
    for node, shapes_out in inferred.items():
        attrs = G._node.get(node)
        if attrs is None:  # a layer inside a body (its path id): no tensor of its own
            continue
        for port, shape in zip(attrs.get("outputs") or [], shapes_out, strict=False):
            size = tensor_bytes(str(shape), port_etype(G, node, port), bounded=False)
            if attrs["type"] == "Parameter":
                total += size
            elif node in wanted:
                total += 2 * size
            else:
                biggest = max(biggest, size)
    return total + 2 * biggest
