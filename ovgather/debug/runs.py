"""The runs of a search, in the runtime's worker process (``runtime.worker``): a native
crash of the CPU plugin ends that child, never ``reduce``, and is a result (the next call
starts a new child).

Three things are run there: the whole model's inputs made (:func:`make_inputs`), the
tensors the whole model computes at some layer outputs (:func:`run_in_child` with
``ports``: a model cut to those outputs, so that only what they depend on runs), and a
candidate run on its feeds (:func:`run_in_child` without ports: each output's shape and
how many of its elements are NaN or Inf). :class:`Values` keeps the tensors of the whole
model the search has asked for, so that each is computed once.

A test puts a function of the same signature in :data:`RUN` (sent by reference, as
``validate.runner.RUN_SHAPES`` is), one that crashes the child on a marked layer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np

from ..runtime.worker import RuntimeCrash, Worker, shared_worker
from .cuts import Port, synthetic

__all__ = ["RUN", "run_in_child", "make_inputs", "Values", "OutputFacts"]

#: What the worker runs a model with (``run_in_child`` when None; a test's stub otherwise).
RUN: Any = None

#: in the child: the one whole model held for its layer outputs (path, mtime, runner)
_HELD: list[Any] = []


def make_inputs(xml: str, sizes: Mapping[str, Sequence[int]], seed: int
                ) -> dict[str, np.ndarray]:
    """In the child: inputs for every Parameter of ``xml`` at ``sizes`` (by friendly
    name), made as validate makes them (indices in range, masks, positions)."""
    from ..runtime import feeds_by_name
    from ..runtime.feeding import make_arrays
    from ..runtime.models import read_model

    model = read_model(xml)
    params = model.get_parameters()
    feeds = feeds_by_name(model, sizes)
    names = [p.get_friendly_name() for p in params]
    arrays = make_arrays([feeds[n] for n in names], [sizes[n] for n in names],
                         [p.get_element_type().to_dtype() for p in params], seed, 0)
    return dict(zip(names, arrays, strict=True))


def run_in_child(xml: str, feeds: Mapping[str, np.ndarray],
                 ports: Sequence[tuple[str, int]] | None = None) -> Any:
    """In the child. Without ``ports``: run ``xml`` on ``feeds`` and give each output's
    ``(name, shape, non-finite elements)``. With ``ports`` (layer friendly name, output
    position): the tensors there, from the model cut to those outputs (copies)."""
    if ports is None:
        from ..runtime.core import compile_model, run_request
        from ..runtime.models import read_model
        from ..runtime.precision import feed_in_order

        model = read_model(xml)
        compiled = compile_model(model, None)
        request = run_request(compiled, feed_in_order(model.get_parameters(), feeds))
        out = []
        for k, result in enumerate(model.get_results()):
            data = request.get_output_tensor(k).data
            bad = int(data.size - np.count_nonzero(np.isfinite(data))) \
                if data.dtype.kind == "f" else 0
            out.append((result.get_friendly_name(), list(data.shape), bad))
        return out
    from ..runtime.layer_runs import OpenVinoLayers

    key = (xml, os.path.getmtime(xml))
    if not _HELD or _HELD[0][0] != key:
        _HELD.clear()
        _HELD.append((key, OpenVinoLayers(xml)))
    runner = _HELD[0][1]
    by_port = {(o.layer, o.port): o for o in runner.outputs()}
    wanted = [by_port[p] for p in ports if p in by_port]
    got = runner.run(feeds, wanted)
    return {(o.layer, o.port): np.array(v) for o, v in got.items()}


class OutputFacts(list):
    """What a candidate's run gave: ``(output name, shape, non-finite elements)``."""


class Values:
    """The tensors of the whole model (``xml`` fed ``inputs``) at the layer outputs a
    search cuts at, each run for once and kept; a tensor the model cannot give (its
    run crashes or fails before it) is made up (:func:`cuts.synthetic`) and listed in
    ``made_up``. ``runs`` counts the runs of the whole model."""

    def __init__(self, G: nx.MultiDiGraph, xml: str, inputs: Mapping[str, np.ndarray],
                 shapes: Mapping[Port, Any], worker: Worker | None = None) -> None:
        self.G, self.xml, self.inputs, self.shapes = G, xml, dict(inputs), shapes
        self.worker = worker if worker is not None else shared_worker()
        self.known: dict[Port, np.ndarray] = {}
        self.made_up: set[Port] = set()
        self.runs = 0

    def _index(self, port: Port) -> int:
        return [p["id"] for p in self.G.nodes[port[0]]["outputs"]].index(port[1])

    def get(self, ports: Sequence[Port]) -> dict[Port, np.ndarray]:
        """The tensor at each of ``ports``."""
        todo = [p for p in dict.fromkeys(ports) if p not in self.known]
        if todo:
            self._fetch(todo)
        return {p: self.known[p] for p in ports}

    def _fetch(self, todo: list[Port]) -> None:
        from ..errors import RuntimeBridgeError

        named = {(self.G.nodes[u]["name"], self._index((u, fp))): (u, fp) for u, fp in todo}
        try:
            self.runs += 1
            got = self.worker.call(RUN or run_in_child, self.xml, self.inputs, list(named))
        except (RuntimeCrash, RuntimeBridgeError):
            if len(todo) > 1:
                half = len(todo) // 2
                self._fetch(todo[:half])
                self._fetch(todo[half:])
                return
            got = {}
        for key, port in named.items():
            if key in got:
                self.known[port] = got[key]
            else:
                self.known[port] = synthetic(self.G, port, self.shapes.get(port))
                self.made_up.add(port)

    def run(self, xml: str, feeds: Mapping[str, np.ndarray]) -> OutputFacts:
        """A candidate run in the child: its outputs' facts (RuntimeCrash, or
        RuntimeBridgeError when the plugin refuses it)."""
        return OutputFacts(self.worker.call(RUN or run_in_child, xml, dict(feeds), None))
