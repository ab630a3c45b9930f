"""How the shape walk runs the bodies of TensorIterator-1, Loop-5 and If-8.

The rules in ``ops/subgraph.py`` see a body only through :class:`Body`; its :meth:`Body.run`
re-infers the body's layers with the walk function the walk hands over (this module
never imports the walk, so the two do not import each other).

One :class:`BodyRuns` goes down a whole walk, through every body at any depth. It
remembers each body run by its inputs, so that a body run again on the same inputs is
not walked again: a Loop whose back edge does not fit its Parameter runs its body twice,
and without the memo a Loop nested 30 deep in such Loops would run its body 2^30 times.
With ``keep`` it also keeps what each run gave the body's layers (``infer.body_runs``,
which ``explain`` reads). It is an object passed down, not module state, so two walks in
two threads never see each other's bodies.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .._lazy import networkx as nx
from ..errors import ShapeInferenceError
from ..ops.core.spec import openvino_type
from .inputs import parameter_tensor, tensors_reaching

__all__ = ["Body", "BodyRuns", "infer_nested"]


class _Results(dict):
    """Result id -> the tensor reaching that Result; a missing id is a broken port map."""

    def __missing__(self, key: str) -> Any:
        raise ShapeInferenceError(f"a port map must name a Result of the body, but "
                                  f"{key!r} is none")


class BodyRuns:
    """The body runs of one walk. ``memo`` maps (body graph, inputs) to what that run
    gave: the Result tensors, the checked layers (named inside the body only) and the
    tensors by node and port. With ``keep``, ``runs`` maps a body's path id prefix
    (``4/body/``; nested bodies ``4/body/6/body/``) to ``(body graph, tensors of its
    last run by node and port)``."""

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        self.memo: dict[tuple, tuple[dict, list, dict]] = {}
        self.runs: dict[str, tuple[nx.MultiDiGraph, dict]] = {}
        #: the path id prefixes of the bodies running now, outermost first
        self.running: list[str] = []


def _inputs_key(G: nx.MultiDiGraph, params: dict[str, Any]) -> tuple | None:
    """What a body run depends on besides the body itself: each given Parameter's
    tensor. None when a value cannot be a key (the run is then not remembered)."""
    key = (id(G), tuple(sorted((pid, t.shape, t.etype, t.value, t.const, t.parts)
                               for pid, t in params.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class Body:
    """One body of a layer, as the rules in ``ops/subgraph.py`` see it.

    ``port_map`` and ``back_edges`` are the layer's (``graph.py`` schema). :meth:`run`
    re-infers the body with some Parameters given (the others keep their own ``shape``
    attribute) and keeps the checked layers of that run in ``layers``, named by their
    path (``Loop_3/body/Add_7``, ids ``3/body/5``): the last run is the one reported.
    """

    def __init__(self, G: nx.MultiDiGraph, name: str, port_map: dict, back_edges: list,
                 owner: str, owner_name: str, run_layers: Callable[..., None],
                 runs: BodyRuns) -> None:
        self.G, self.name = G, name
        self.run_layers, self.runs = run_layers, runs
        self.port_map = {"inputs": port_map.get("inputs") or [],
                         "outputs": port_map.get("outputs") or []}
        self.back_edges = back_edges
        self.id_path, self.name_path = f"{owner}/{name}/", f"{owner_name}/{name}/"
        self.layers: list[Any] = []

    def declared_type(self, param: str) -> str:
        """The element type a body Parameter declares."""
        return (self.G._node[param].get("data") or {}).get("element_type", "dynamic")

    def declared(self, param: str) -> Any:
        """The tensor a body Parameter declares (its ``shape`` attribute)."""
        attrs = self.G._node[param]
        return parameter_tensor(attrs, attrs.get("data") or {}, None)

    def source_parameter(self, result: str) -> str | None:
        """The Parameter that feeds Result ``result`` directly, else None."""
        for u in self.G._pred.get(result, ()):
            if openvino_type(self.G._node[u]["type"]) == "Parameter":
                return u
        return None

    def run(self, params: dict[str, Any]) -> dict[str, Any]:
        runs = self.runs
        key = _inputs_key(self.G, params)
        known = runs.memo.get(key) if key is not None else None
        if known is None:
            known = self._walk(params)
            if key is not None:
                runs.memo[key] = known
        results, layers, produced = known
        if runs.keep:
            runs.runs["".join(runs.running) + self.id_path] = (self.G, produced)
        # fresh copies: an outer body prefixes the path of each layer it reports
        self.layers = [copy.copy(r) for r in layers]
        for r in self.layers:
            r.id, r.name = self.id_path + r.id, self.name_path + r.name
        return results

    def _walk(self, params: dict[str, Any]) -> tuple[dict, list, dict]:
        G, produced, found, nested = self.G, {}, [], {}
        runs = self.runs
        runs.running.append(self.id_path)
        try:
            self.run_layers(G, None, G._node, found.append, params=params, produced=produced,
                            nested=nested, capture=runs)
        finally:
            runs.running.pop()
        layers = [r for lr in found for r in (lr, *nested.get(lr.id, ()))]
        results = _Results((n, tensors_reaching(attrs, G._pred[n], produced)[0])
                           for n, attrs in G._node.items() if attrs["type"] == "Result")
        return results, layers, produced


def infer_nested(node: str, attrs: dict[str, Any], spec: Any, ins: list, rule_attrs: Any,
                 nested: dict | None, run_layers: Callable[..., None],
                 runs: BodyRuns) -> tuple[str, list | None]:
    """Run the rule of a layer with bodies (the walk's hook); the checked layers of its
    bodies go to ``nested[node]`` when the walk collects them. ``run_layers`` is the
    walk's own layer loop, which :meth:`Body.run` calls for each body."""
    bodies = attrs.get("bodies")
    if not bodies:
        return "unchecked", None  # built without bodies: nothing to infer from
    port_maps, back_edges = attrs.get("port_maps") or {}, attrs.get("back_edges") or {}
    rule_attrs.bodies = {
        name: Body(body, name, port_maps.get(name) or {}, back_edges.get(name) or [], node,
                   attrs["name"], run_layers, runs)
        for name, body in bodies.items()}
    try:
        return "ok", spec.rule(ins, rule_attrs, None)
    finally:
        if nested is not None:
            nested[node] = [lr for b in rule_attrs.bodies.values() for lr in b.layers]
