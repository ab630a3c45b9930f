"""The whole-model runner of runtime proof: the IR compiled with extra outputs at the
ports asked for, held one chunk at a time, run at the input sizes chosen (``sizes``) on
inputs made for them, and the test that a real shape lies inside an inferred one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np

from .. import runtime
from ..element_types import element_type_name, is_integral_number, numpy_dtype
from ..errors import UnsupportedOpError
from ..graph.schema import input_edges
from ..infer import check
from ..ops.core import registry
from ..ops.core.spec import Attrs
from ..shapes import PartialShape

__all__ = ["Runs", "feeds", "size_inputs", "fits", "xml_file"]


def fits(shape: Sequence[int], inferred: PartialShape) -> bool:
    """A concrete shape inside a partial one: equal when static, within every interval
    otherwise (a data-dependent op upstream, such as NonZero, leaves bounds only).

    >>> fits([2, 3], PartialShape.parse("[2,1..4]")), fits([2], PartialShape.parse("[3]"))
    (True, False)
    """
    if inferred.dims is None:
        return True
    return len(shape) == len(inferred.dims) and all(
        d.lo <= n <= d.hi for n, d in zip(shape, inferred.dims, strict=True))


def _zeros_or_noise(shape: PartialShape, etype: str, rng: np.random.Generator) -> np.ndarray:
    dims = [d.lo for d in shape.dims]
    name = numpy_dtype(element_type_name(etype)) or "float32"
    if np.dtype(name).kind == "f":
        return rng.standard_normal(dims, dtype=np.float32).astype(name, copy=False)
    return np.zeros(dims, dtype=name)


def feeds(sizes: Mapping[str, PartialShape], types: Mapping[str, str], seed: int,
          k: int, given: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The inputs of the ``k``-th sizes tried (made again when needed, never kept): the
    ``given`` ones (:func:`size_inputs`), zeros for the other integer and boolean types (a
    valid index, mask and token id for any size), small random numbers for real types."""
    rng = np.random.default_rng([seed, k])
    made = {n: _zeros_or_noise(s, types.get(n, "f32"), rng) for n, s in sizes.items()}
    return {**made, **(given or {})}


def size_inputs(G: nx.MultiDiGraph, sizes: Mapping[str, PartialShape],
                rows: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Values for the integer Parameters that feed an op a size its spec's input maker
    knows valid ones for (``size_values(shapes, attrs) -> {input position: values}``,
    Col2Im's kernel: zeros there end the process), by friendly name. ``rows``:
    ``check``'s layers at ``sizes`` by id, walked here when needed and not given."""
    given: dict[str, np.ndarray] = {}
    for p, attrs in G.nodes(data=True):
        etype = (attrs.get("data") or {}).get("element_type", "f32")
        if attrs["type"] != "Parameter" or not is_integral_number(etype) \
                or numpy_dtype(element_type_name(etype)) is None:
            continue
        for _, v, key in G.out_edges(p, keys=True):
            maker = _size_maker(G.nodes[v])
            if maker is None:
                continue
            if rows is None:
                rows = {lr.id: lr for lr in check(G, shapes=dict(sizes)).layers}
            ins = input_edges(G, v)
            shapes = [_inferred(G, rows, u, port) for u, port, _ in ins]
            values = maker.size_values(shapes, Attrs(G.nodes[v].get("data") or {}))
            at = [k for k, (_, _, to) in enumerate(ins) if to == key[1]]
            if at and at[0] in values:
                given[attrs["name"]] = np.array(values[at[0]],
                                                dtype=numpy_dtype(element_type_name(etype)))
    return given


def _size_maker(attrs: Mapping[str, Any]) -> Any:
    try:
        spec = registry.find(attrs["type"], attrs.get("version"))
    except UnsupportedOpError:
        return None
    maker = spec.inputs if spec is not None else None
    return maker if hasattr(maker, "size_values") else None


def _inferred(G: nx.MultiDiGraph, rows: Mapping[str, Any], node: str,
              port_id: int) -> list[int] | None:
    """The concrete shape ``check`` inferred at output port ``port_id`` of ``node``."""
    row = rows.get(node)
    ids = [p["id"] for p in G.nodes[node]["outputs"]]
    if row is None or port_id not in ids or ids.index(port_id) >= len(row.inferred):
        return None
    shape = PartialShape.parse(row.inferred[ids.index(port_id)])
    return shape.to_list() if shape.is_static else None


class Runs:
    """The extra-output models of one proof, compiled once per chunk of ports and run at
    every size; one held at a time. ``names`` maps a node to its friendly name;
    ``ranks_only`` is ``runtime.OutputShapes``'s (reshape only the dynamic-rank inputs);
    ``compiles`` counts the compiles."""

    def __init__(self, xml: str, names: Mapping[str, str], threads: int | None, *,
                 ranks_only: bool = False) -> None:
        self.xml, self.names, self.threads, self.ranks_only = xml, names, threads, ranks_only
        self.key: tuple | None = None
        self.runner: Any = None
        self.compiles = 0

    def _held(self, part: Sequence[tuple[str, int]]) -> Any:
        key = tuple(part)
        if key != self.key:
            self.key, self.runner = None, None
            self.runner = runtime.OutputShapes(
                self.xml, [(self.names[n], i) for n, i in part], threads=self.threads,
                ranks_only=self.ranks_only)
            self.key = key
        return self.runner

    def shapes(self, part: Sequence[tuple[str, int]], sizes: Mapping[str, PartialShape],
               seed: int, k: int, types: Mapping[str, str],
               given: Mapping[str, np.ndarray] | None = None) -> dict[tuple[str, int], str]:
        """The real shape of each port of ``part`` at ``sizes`` (on the inputs
        :func:`feeds` makes for them, ``given`` among them); a port the runtime cannot be
        asked for is left out."""
        runner = self._held(part)
        before = runner.compiles
        try:
            shapes = runner.shapes({n: [d.lo for d in v.dims] for n, v in sizes.items()},
                                   lambda: feeds(sizes, types, seed, k, given))
        finally:
            self.compiles += runner.compiles - before
        return {(n, i): shapes[self.names[n], i] for n, i in part
                if (self.names[n], i) in shapes}

    def partial_shapes(self, part: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """OpenVINO's partial shape of each port of ``part``, as read."""
        known = self._held(part).partial_shapes
        return {(n, i): known[self.names[n], i] for n, i in part
                if (self.names[n], i) in known}


class xml_file:  # noqa: N801 - used as a function: ``with xml_file(G) as path``
    """The graph's .xml path, or a temporary IR written from it when it has none."""

    def __init__(self, G: nx.MultiDiGraph) -> None:
        self.G, self.tmp = G, None

    def __enter__(self) -> str:
        path = self.G.graph.get("xml_path")
        if path and os.path.isfile(path):
            return path
        from ..ir import write_ir

        self.tmp = tempfile.TemporaryDirectory(prefix="ovgather-")
        path = os.path.join(self.tmp.name, "model.xml")
        write_ir(self.G, path)
        return path

    def __exit__(self, *exc: object) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()
