"""A model run on the OpenVINO CPU plugin with any of its layer outputs exposed: the
OpenVINO side of ``compare --all-layers`` (a :class:`~.layer_outputs.LayerRunner`).

The model is what OpenVINO reads: an IR ``.xml``, an ovgather graph, or an ``.onnx`` read
by OpenVINO's ONNX frontend node by node (``Core.read_model``: each ONNX node output keeps
its name, where ``convert_model``'s fusions and constant folding would merge many away).
Each :meth:`OpenVinoLayers.run` compiles a model cut to the outputs asked for (a Result at
each, the model's state writes kept: what none of them depends on is not run, so that a
layer that crashes the CPU plugin ends only the runs that reach it), once (f32 inference,
``core.compile_model``), and runs it once.
What it hands back is the runtime's own output memory, valid until the next run (no copy:
a chunk of outputs costs its size once).

Layers are described as :class:`LayerOutput`: the friendly name, the output's position,
its tensor names, the XML line of the layer (an IR file only), the op type, and whether
only constants feed it (a Constant, or the Convert/Subtract/Multiply of a compressed
weight: the plugin folds them, nothing is run to compare).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import IRError, RuntimeBridgeError
from .core import compile_model, first_line, openvino, run_request
from .interop import ONNX_SUFFIXES
from .layer_outputs import LayerOutput
from .models import read_model
from .outputs import IRBytes, _read, port_bytes

__all__ = ["OpenVinoLayers"]

#: ops that are no layer output to compare: the model's inputs and outputs, and state
#: writes (sinks: the CPU plugin compiles no extra output on them; what they write is
#: their input's value, compared where it is made)
_NOT_LAYERS = ("Parameter", "Result", "Assign")
#: a layer's opening tag in an IR (its ``name`` attribute is read from it)
_LAYER_TAG = re.compile(rb"<layer\b[^>]*>")
_NAME = re.compile(rb'\bname="([^"]*)"')


class OpenVinoLayers:
    """``source`` (an IR or ``.onnx`` path, or a graph from ``read_ir``) as OpenVINO reads
    it, every layer output listed in topological order and any of them run.

    >>> layers = OpenVinoLayers("model.xml")                 # doctest: +SKIP
    >>> wanted = [o for o in layers.outputs() if not o.constant][:100]   # doctest: +SKIP
    >>> values = layers.run({"input_ids": ids}, wanted)      # doctest: +SKIP
    """

    def __init__(self, source: Any, threads: int | None = None, *,
                 model: Any = None, path: str | None = None) -> None:
        if model is not None:  # read already (``compare``'s model, run with these exposed)
            self.model, self.path = model, path
        elif isinstance(source, (str, os.PathLike)) and \
                os.fspath(source).lower().endswith(ONNX_SUFFIXES):
            if not os.path.isfile(source):
                raise IRError("the model file does not exist", file=os.fspath(source))
            # the frontend node by node: every ONNX node output keeps its name (what
            # convert_model's fusions and folding would merge away)
            self.model, self.path = read_model(os.fspath(source)), os.fspath(source)
        else:
            self.model, self.path = _read(source)
        self.threads = threads
        #: compiles so far (one per :meth:`run`)
        self.compiles = 0
        self._request: Any = None  # the last run's, while its outputs are in use
        lines = _lines(source, self.path)
        self._ports: dict[LayerOutput, Any] = {}
        constant: set[Any] = set()
        position = {p: k for k, p in enumerate(self.model.get_parameters())}
        for op in self.model.get_ordered_ops():
            kind = op.get_type_name()
            ins = [v.get_node() for v in op.input_values()]
            if kind == "Constant" or (ins and all(n in constant for n in ins)):
                constant.add(op)
            if kind in _NOT_LAYERS:
                continue
            name = op.get_friendly_name()
            sources = tuple(None if n in constant else
                            ("", position[n]) if n in position else
                            (n.get_friendly_name(), v.get_index())
                            for n, v in zip(ins, op.input_values(), strict=True))
            for k in range(op.get_output_size()):
                out = op.output(k)
                record = LayerOutput(name, k, frozenset(out.get_names()), lines.get(name),
                                     kind, op in constant, sources)
                self._ports.setdefault(record, out)
        self._outputs = tuple(self._ports)

    def port(self, output: LayerOutput) -> Any:
        """The ``openvino.Output`` of a layer output of :meth:`outputs`."""
        return self._ports[output]

    def outputs(self) -> Sequence[LayerOutput]:
        """Every output of every layer, in topological order (Results and Parameters
        excluded; constants included, marked ``constant``)."""
        return self._outputs

    def input_names(self) -> list[str]:
        """The name each input answers to first (as ``compare`` names them)."""
        return [p.output(0).get_any_name() if p.output(0).get_names()
                else p.get_friendly_name() for p in self.model.get_parameters()]

    def run(self, feeds: Mapping[str, np.ndarray],
            wanted: Sequence[LayerOutput]) -> dict[LayerOutput, np.ndarray]:
        """Run once on ``feeds`` (keyed by any name of each input) with ``wanted`` exposed;
        the value of each, in the runtime's memory (valid until the next run). An output
        the model gave no Result for is left out."""
        self._request = None  # let the last run's memory go before this one's compile
        feed = self._feed(feeds)
        params = self.model.get_parameters()
        dynamic = {p.output(0): list(a.shape) for p, a in zip(params, feed, strict=True)
                   if p.get_partial_shape().rank.is_dynamic}
        if dynamic:  # the CPU plugin compiles no dynamic rank
            self._reshape(dynamic)
        outs = [self._ports[w] for w in wanted]
        cut = self._cut(outs)
        slot = {(r.input_value(0).get_node(), r.input_value(0).get_index()): k
                for k, r in reversed(list(enumerate(cut.get_results())))}
        try:
            compiled = compile_model(cut, self.threads)
        except RuntimeBridgeError as err:
            err.located(file=self.path)
            raise
        self.compiles += 1
        try:
            request = run_request(compiled, feed)
        except RuntimeBridgeError as err:
            err.located(file=self.path)
            raise
        self._request = request
        return {w: request.get_output_tensor(slot[key]).data
                for w, o in zip(wanted, outs, strict=True)
                if (key := (o.get_node(), o.get_index())) in slot}

    def _cut(self, outs: Sequence[Any]) -> Any:
        """A model of the same nodes whose Results are ``outs`` alone (and the state
        writes): what no output asked for depends on is not run, so that a layer the CPU
        plugin crashes on ends only the runs that reach it."""
        ov = openvino()
        from openvino import opset13

        results = [opset13.result(o) for o in outs]
        return ov.Model(results, list(self.model.get_sinks()),
                        list(self.model.get_parameters()), self.model.get_friendly_name())

    def output_bytes(self, shapes: Mapping[str, Sequence[int]]) -> dict[LayerOutput, int]:
        """Bytes of each layer output when the inputs have ``shapes`` (by input name), from
        OpenVINO's shape inference on a copy reshaped to them (a shape it leaves dynamic
        counts its upper bound, or 0 when it has none); empty when the copy cannot be
        reshaped (the run will say why)."""
        ov = openvino()
        copy = self.model.clone()
        try:
            copy.reshape({p.output(0): ov.PartialShape([int(d) for d in s])
                          for p, s in zip(copy.get_parameters(), self._by_position(shapes),
                                          strict=True)})
        except (RuntimeError, KeyError):
            return {}
        wanted = {(o.layer, o.port) for o in self._outputs}
        sizes = {}
        for op in copy.get_ordered_ops():  # a Result or Constant is no layer output here
            name = op.get_friendly_name()
            for k in range(op.get_output_size()):
                if (name, k) in wanted:
                    sizes[name, k] = port_bytes(op.output(k))
        return {o: sizes.get((o.layer, o.port), 0) for o in self._outputs}

    def _by_position(self, named: Mapping[str, Any]) -> list[Any]:
        out = []
        for p in self.model.get_parameters():
            names = {p.get_friendly_name(), *p.output(0).get_names()}
            found = [named[n] for n in names if n in named]
            if not found:
                raise KeyError(p.get_friendly_name())
            out.append(found[0])
        return out

    def arrays(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """``feeds`` (by any name of each input) in the inputs' order."""
        return self._feed(feeds)

    def _feed(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        try:
            return [np.asarray(a) for a in self._by_position(feeds)]
        except KeyError as err:
            raise RuntimeBridgeError(f"input '{err.args[0]}' is not fed (fed: "
                                     f"{sorted(feeds)})", file=self.path) from None

    def _reshape(self, shapes: Mapping[Any, list[int]]) -> None:
        try:
            self.model.reshape({port: openvino().PartialShape(s) for port, s in shapes.items()})
        except RuntimeError as err:
            raise RuntimeBridgeError(f"OpenVINO could not reshape the model to the inputs "
                                     f"fed: {first_line(err)}", file=self.path) from err


def _lines(source: Any, path: str | None) -> dict[str, int]:
    """The XML line of each layer by friendly name: a graph's own, or an IR file's opening
    ``<layer`` tags (the first of a name: the main graph's layers precede any body's
    layers of the same name only where they come first in the file); empty otherwise."""
    if isinstance(source, IRBytes):  # a graph as written: its lines in that text
        text = source.xml
    elif not isinstance(source, (str, os.PathLike)):
        return {a["name"]: a.get("line") for _, a in source.nodes(data=True)
                if a.get("line") is not None}
    elif path is None or not path.lower().endswith(".xml"):
        return {}
    else:
        try:
            with open(path, "rb") as f:
                text = f.read()
        except OSError:
            return {}
    lines: dict[str, int] = {}
    line, at = 1, 0
    for match in _LAYER_TAG.finditer(text):
        line += text.count(b"\n", at, match.start())
        at = match.start()
        name = _NAME.search(match.group(0))
        if name is not None:
            lines.setdefault(html.unescape(name.group(1).decode("utf-8", "replace")), line)
    return lines
