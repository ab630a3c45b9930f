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
from ..errors import RuntimeBridgeError, UnsupportedOpError
from ..graph.schema import input_edges
from ..infer import check
from ..ops.core import registry
from ..ops.core.spec import Attrs
from ..shapes import PartialShape

__all__ = ["Runs", "feeds", "size_inputs", "fits", "xml_file", "shapes_in_worker"]


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
    knows valid ones for (``size_values(shapes, attrs) -> {input position: values}``:
    Slice's bounds and axes, TopK's k, a Reshape's or Broadcast's target shape, Col2Im's
    kernel, where zeros end the run or the process), by friendly name. The value may
    reach the op through layers that keep its elements in order (a Convert, a Squeeze
    of ``[k]`` to the scalar k, ``CARRIERS``). When several ops read it, the first (in
    graph order) whose maker gives values decides, and the others' makers agree or their
    ops may refuse it (the proof then says why). ``rows``: ``check``'s layers at ``sizes``
    by id, walked here when needed and not given."""
    given: dict[str, np.ndarray] = {}
    for p, attrs in G.nodes(data=True):
        etype = (attrs.get("data") or {}).get("element_type", "f32")
        dtype = numpy_dtype(element_type_name(etype))
        if attrs["type"] != "Parameter" or not is_integral_number(etype) or dtype is None \
                or attrs["name"] not in sizes:
            continue
        shape = [d.lo for d in sizes[attrs["name"]].dims]
        for v, position in _readers(G, p):
            maker = _size_maker(G.nodes[v])
            if maker is None:
                continue
            if rows is None:
                rows = {lr.id: lr for lr in check(G, shapes=dict(sizes)).layers}
            ins = input_edges(G, v)
            values = maker.size_values([_inferred(G, rows, u, port) for u, port, _ in ins],
                                       Attrs(G.nodes[v].get("data") or {},
                                             _version(G.nodes[v])))
            if position in values:
                flat = np.asarray(values[position], dtype=np.int64).ravel()
                if flat.size == int(np.prod(shape)):
                    given[attrs["name"]] = flat.reshape(shape).astype(dtype)
                    break
    return given


#: Layers whose output holds their first input's elements in order: a value fed through
#: them reaches the op reading it unchanged (TopK's k is ``Squeeze([k])`` in a converted
#: ONNX model).
CARRIERS = ("Convert", "Squeeze", "Unsqueeze", "Reshape")


def _readers(G: nx.MultiDiGraph, p: str, depth: int = 4) -> list[tuple[str, int]]:
    """The layers that read the output of ``p``, each with the position of the input
    they read it at, through ``CARRIERS`` (``depth`` of them at most), in graph order."""
    out: list[tuple[str, int]] = []
    for _, v, key in G.out_edges(p, keys=True):
        at = [k for k, (_, _, to) in enumerate(input_edges(G, v)) if to == key[1]]
        if not at:
            continue
        if G.nodes[v]["type"] in CARRIERS and at[0] == 0 and depth:
            out += _readers(G, v, depth - 1)
        else:
            out.append((v, at[0]))
    return out


def _version(attrs: Mapping[str, Any]) -> int:
    """The op version of a layer's spec (1 when there is none)."""
    try:
        spec = registry.find(attrs["type"], attrs.get("version"))
    except UnsupportedOpError:
        return 1
    return spec.version if spec is not None else 1


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


#: What the worker process runs a chunk with (:func:`shapes_in_worker`; a test puts one
#: there that crashes the process on a marked layer).
RUN_SHAPES: Any = None

#: in the worker process: the one extra-output model held (key, ``runtime.OutputShapes``)
_HELD: list[Any] = []


def shapes_in_worker(xml: str, wanted: Sequence[tuple[str, int]], threads: int | None,
                     ranks_only: bool, cut: bool, sizes: Mapping[str, Sequence[int]] | None,
                     feed: tuple | None) -> tuple[dict[tuple[str, int], str], int, dict]:
    """Run in the runtime's worker: the model with extra outputs at ``wanted`` (held
    between calls, one at a time), run at ``sizes`` on ``feeds(*feed)`` (no run when
    ``sizes`` is None): the real shapes, the compiles it took, OpenVINO's partial shapes."""
    key = (xml, tuple(wanted), threads, ranks_only, cut)
    if not _HELD or _HELD[0][0] != key:
        _HELD.clear()
        _HELD.append((key, runtime.OutputShapes(xml, list(wanted), threads=threads,
                                                ranks_only=ranks_only, cut=cut)))
    runner = _HELD[0][1]
    before = runner.compiles
    shapes = {} if sizes is None else runner.shapes(sizes, lambda: feeds(*feed))
    return shapes, runner.compiles - before, runner.partial_shapes


def drop_held() -> None:
    """Run in the runtime's worker: let go of the model :func:`shapes_in_worker` holds."""
    _HELD.clear()


class Runs:
    """The extra-output models of one proof, compiled once per chunk of ports and run at
    every size, in the runtime's worker process (one model held there at a time).
    ``names`` maps a node to its friendly name; ``ranks_only`` is
    ``runtime.OutputShapes``'s (reshape only the dynamic-rank inputs); ``compiles``
    counts the compiles; ``G``, the graph, lets a crash be traced to its layer.

    Two failures are worked around rather than taken as the model's:

    - the CPU plugin refuses a compile with many extra outputs that it takes without
      them: the chunk is proved in halves, down to single ports, and the halves are
      remembered, so the next size runs them without being refused again; a port
      refused alone is in ``refused`` with the plugin's words (an IR v10 whose legacy
      output names collide with tensor names is no such case:
      ``runtime.models.clear_legacy_names``);
    - the runtime's process dies (a signal in native code): the chunk is run in models
      cut at its ports (only what they depend on runs), and the first port whose cut
      model crashes, with every cut model ending before it running, is in ``crashed``;
      the ports after it in ``after_crash`` (by node: the node that crashed), and the
      others are run without it.
    """

    def __init__(self, xml: str, names: Mapping[str, str], threads: int | None, *,
                 ranks_only: bool = False, G: nx.MultiDiGraph | None = None) -> None:
        self.xml, self.names, self.threads, self.ranks_only = xml, names, threads, ranks_only
        self.G = G
        self.compiles = 0
        self.worker = runtime.shared_worker()
        self.refused: dict[tuple[str, int], str] = {}
        self.crashed: dict[str, str] = {}
        self.after_crash: dict[str, str] = {}
        self._bare: dict[tuple, str | None] = {}
        #: chunks planned (for :attr:`planned`), and what is called after each run
        #: (``progress(runs)``: a progress line reads ``compiles`` and ``planned``)
        self.chunks = 1
        self.progress: Any = None
        self._seen: set[str] = set()
        #: the halves of each chunk the plugin refused to compile whole, so that the next
        #: size runs them at once rather than being refused again
        self._pieces: dict[tuple, tuple[list, list]] = {}

    def _call(self, part: Sequence[tuple[str, int]], cut: bool, sizes, feed) -> tuple:
        fn = RUN_SHAPES or shapes_in_worker
        shapes, compiles, partial = self.worker.call(
            fn, self.xml, [(self.names[n], i) for n, i in part], self.threads,
            self.ranks_only, cut, sizes, feed)
        self.compiles += compiles
        self._seen.update(name for name, _ in shapes)
        if self.progress is not None:
            self.progress(self)
        return shapes, partial

    @property
    def ran(self) -> int:
        """Layers (by friendly name) the runtime gave a real shape of so far."""
        return len(self._seen)

    @property
    def planned(self) -> int:
        """The compiles this proof will take, as far as known now: one per chunk
        (``chunks``, set by the caller), and the halves of each chunk refused whole."""
        return max(self.compiles, self.chunks + 2 * len(self._pieces) + len(self._bare))

    def shapes(self, part: Sequence[tuple[str, int]], sizes: Mapping[str, PartialShape],
               seed: int, k: int, types: Mapping[str, str],
               given: Mapping[str, np.ndarray] | None = None) -> dict[tuple[str, int], str]:
        """The real shape of each port of ``part`` at ``sizes`` (on the inputs
        :func:`feeds` makes for them, ``given`` among them); a port the runtime cannot be
        asked for, refuses alone or cannot reach past a crash is left out."""
        concrete = {n: [d.lo for d in v.dims] for n, v in sizes.items()}
        feed = (sizes, types, seed, k, given)
        gone = set(self.crashed) | set(self.after_crash)
        kept = [p for p in part if p[0] not in gone]
        if not kept:
            return {}
        shapes = self._run(kept, bool(gone), concrete, feed)
        return {(n, i): shapes[self.names[n], i] for n, i in kept
                if (self.names[n], i) in shapes}

    def _run(self, part: list[tuple[str, int]], cut: bool, sizes, feed) -> dict:
        pieces = self._pieces.get((tuple(part), cut))
        if pieces is not None:  # refused at another size: its pieces, without a new search
            return self._run_pieces([[p for p in piece if p not in self.refused]
                                     for piece in pieces], cut, sizes, feed)
        try:
            return self._call(part, cut, sizes, feed)[0]
        except runtime.RuntimeCrash as crash:
            if self.G is None:
                raise
            return self._trace_crash(part, crash, sizes, feed)
        except RuntimeBridgeError as err:
            if len(part) < 2 or "could not compile" not in err.message \
                    or self._bare_refused(sizes, feed):
                raise
        half = len(part) // 2  # the plugin refuses so many outputs: halves, remembered
        self._pieces[tuple(part), cut] = (part[:half], part[half:])
        return self._run_pieces([part[:half], part[half:]], cut, sizes, feed)

    def _run_pieces(self, pieces: list[list[tuple[str, int]]], cut: bool, sizes, feed) -> dict:
        """Each piece run on its own; a piece the plugin refuses marks its ports refused."""
        out: dict = {}
        for piece in pieces:
            if not piece:
                continue
            try:
                out.update(self._run(piece, cut, sizes, feed))
            except RuntimeBridgeError as err:
                for port in piece:
                    self.refused.setdefault(port, err.message)
        return out

    def _bare_refused(self, sizes, feed) -> str | None:
        """Why the model fails to compile or run with none of the extra outputs, or None."""
        key = repr(sizes)
        if key not in self._bare:
            try:
                self._call([], False, sizes, feed)
                self._bare[key] = None
            except RuntimeBridgeError as err:
                self._bare[key] = err.message
        return self._bare[key]

    def _trace_crash(self, part: list[tuple[str, int]], crash: Exception, sizes,
                     feed) -> dict:
        """Find the first port of ``part`` (in graph order) whose cut model crashes: a
        binary search over cut models ending at a prefix of ``part``."""
        ran: dict[int, dict] = {}

        def crashes(k: int) -> bool:
            try:
                ran[k] = self._call(part[:k], True, sizes, feed)[0]
                return False
            except runtime.RuntimeCrash:
                return True

        if not crashes(len(part)):  # only the model's own outputs crash it
            return ran[len(part)]
        lo, hi = 1, len(part)
        while lo < hi:
            mid = (lo + hi) // 2
            if crashes(mid):
                hi = mid
            else:
                lo = mid + 1
        culprit = part[hi - 1][0]
        self.crashed[culprit] = (f"{crash} in a model ending at this layer, and in none "
                                 f"ending before it (of {len(part)} layers run together)")
        for node in nx.descendants(self.G, culprit):
            self.after_crash.setdefault(node, culprit)
        out = ran.get(hi - 1) if hi > 1 else {}
        if out is None:
            out = self._run(part[:hi - 1], True, sizes, feed)
        rest = [p for p in part[hi:] if p[0] != culprit and p[0] not in self.after_crash]
        if rest:
            out = {**out, **self._run(rest, True, sizes, feed)}
        return out

    def close(self) -> None:
        """Free the model the worker holds for this proof (its compiled model's memory)."""
        self.worker.call(drop_held)

    def partial_shapes(self, part: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """OpenVINO's partial shape of each port of ``part``, as read."""
        known = self._call(list(part), False, None, None)[1]
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
