"""An ``.onnx`` model run by ONNX Runtime with any of its node outputs exposed: the
reference side of ``compare --all-layers --ref onnxruntime``, a :class:`LayerRunner`.

ONNX Runtime is an optional dependency (``pip install 'ovgather[onnxruntime]'``); it and
``onnx`` are imported on first use, and their absence is one clear :class:`RuntimeBridgeError`.

Every node output is a :class:`LayerOutput`: ``layer`` the node's name (its first output's
name when it has none), ``port`` the output's index, ``tensor_names`` the output's name (the
name OpenVINO's ONNX frontend gives the same tensor), ``type`` the op type (``domain.Op`` outside
the default domain), and ``constant`` for Constant nodes and what only initializers and
constants feed, which the frontend folds. Graph inputs and initializers are not node outputs;
the outputs of subgraphs (If/Loop/Scan bodies) are not exposed.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError
from .layer_outputs import LayerOutput

__all__ = ["OnnxRuntimeLayers", "onnxruntime"]

#: the one line a user reads when the extra is not installed
MISSING = ("running an .onnx model on ONNX Runtime (--ref onnxruntime) needs onnxruntime "
           "and onnx, which are not installed: pip install 'ovgather[onnxruntime]'")

#: session option (ONNX Runtime 1.21 on): the folder external data locations are relative
#: to, for a model given to ONNX Runtime as bytes
EXTERNAL_FOLDER = "session.model_external_initializers_file_folder_path"


@functools.cache
def onnxruntime() -> tuple[Any, Any]:
    """``(onnx, onnxruntime)``, imported on first use."""
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as err:
        raise RuntimeBridgeError(f"{MISSING} ({err})") from err
    return onnx, ort


class OnnxRuntimeLayers:
    """An ``.onnx`` file run on ONNX Runtime's CPU execution provider, any node outputs
    exposed as graph outputs.

    Graph optimizations are off (``ORT_DISABLE_ALL``): at the basic level ONNX Runtime
    already fuses (Conv with a following Add, Mul or BatchNormalization, Gemm with an
    activation, ...) wherever the intermediate tensor is not a graph output, so the value of
    an exposed output would depend on which other outputs are exposed with it (a fused Conv
    rounds differently from Conv then BatchNormalization), and chunked runs would not agree
    with one another. Without optimizations every node runs as its own kernel and every
    exposed value is the one the ONNX graph defines, whatever else is exposed.

    One session is kept per set of exposed outputs (the ``max_sessions`` latest: each holds
    its own copy of the weights). Models with external data are read where they lie::

        layers = OnnxRuntimeLayers("model.onnx")
        wanted = [o for o in layers.outputs() if not o.constant]
        values = layers.run({"input_ids": ids}, wanted)  # {LayerOutput: ndarray}
    """

    def __init__(self, path: str | Path, *, threads: int | None = None,
                 max_sessions: int = 4) -> None:
        self.path = Path(path)
        self.threads = threads
        self.max_sessions = max(1, int(max_sessions))
        onnx, _ = onnxruntime()
        try:
            self._model = onnx.load(str(self.path), load_external_data=False)
        except Exception as err:  # onnx raises DecodeError, OSError, ValueError...
            raise RuntimeBridgeError(f"ONNX cannot read the model ({first_line(err)})",
                                     file=str(self.path)) from err
        self._outputs = tuple(_node_outputs(self._model.graph))
        self._sessions: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        self._types: dict[str, int] | None = None  # shape inference's, on first need

    def outputs(self) -> Sequence[LayerOutput]:
        """Every output of every node of the main graph, in topological order."""
        return self._outputs

    def input_names(self) -> list[str]:
        """The graph inputs a run must be fed (initializers listed as inputs left out)."""
        given = {t.name for t in self._model.graph.initializer}
        return [v.name for v in self._model.graph.input if v.name not in given]

    def run(self, feeds: Mapping[str, np.ndarray],
            wanted: Sequence[LayerOutput]) -> dict[LayerOutput, np.ndarray]:
        """Run once on ``feeds`` with the ``wanted`` outputs exposed; their values."""
        names = tuple(dict.fromkeys(_tensor(o) for o in wanted))
        if not names:
            return {}
        session = self._session(names)
        try:
            values = session.run(list(names), dict(feeds))
        except Exception as err:  # ORT raises its own Fail/InvalidArgument/... kinds
            raise RuntimeBridgeError(f"ONNX Runtime failed to run the model "
                                     f"({first_line(err)})", file=str(self.path)) from err
        by_name = dict(zip(names, values, strict=True))
        return {o: np.asarray(by_name[_tensor(o)]) for o in wanted}

    def _session(self, names: tuple[str, ...]) -> Any:
        key = tuple(sorted(names))
        if key in self._sessions:
            self._sessions.move_to_end(key)
            return self._sessions[key]
        while len(self._sessions) >= self.max_sessions:
            self._sessions.popitem(last=False)
        session = self._sessions[key] = self._new_session(key)
        return session

    def _new_session(self, names: Iterable[str]) -> Any:
        _, ort = onnxruntime()
        if self._types is None:
            self._types = inferred_types(self._model)
        model = exposed(self._model, names, self._types)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 3  # its warnings are no output of ovgather; errors raise
        options.add_session_config_entry(EXTERNAL_FOLDER, str(self.path.resolve().parent))
        if self.threads:
            options.intra_op_num_threads = int(self.threads)
        try:
            return ort.InferenceSession(model.SerializeToString(), options,
                                        providers=["CPUExecutionProvider"])
        except Exception as err:  # ORT raises its own Fail/InvalidGraph/... kinds
            raise RuntimeBridgeError(f"ONNX Runtime cannot load the model "
                                     f"({first_line(err)})", file=str(self.path)) from err


def exposed(model: Any, names: Iterable[str], types: Mapping[str, int] | None = None) -> Any:
    """A copy of ``model`` whose graph outputs also include the tensors ``names``, each
    with its element type from ``types`` (:func:`inferred_types` when not given). An output
    without one (an op of a domain ONNX has no schema for) goes in untyped: ONNX Runtime
    types it from the node's kernel."""
    onnx, _ = onnxruntime()
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    present = {v.name for v in copy.graph.output}
    missing = [n for n in names if n not in present]
    if missing and types is None:
        types = inferred_types(model)
    for name in missing:
        info = copy.graph.output.add()
        info.name = name
        if name in types:
            info.type.tensor_type.elem_type = types[name]
    return copy


def inferred_types(model: Any) -> dict[str, int]:
    """The element type (``onnx.TensorProto`` code) of every tensor of the main graph that
    ``onnx.shape_inference`` can type. Shapes are left out: an exposed output must not be
    held to a shape that inference guessed."""
    onnx, _ = onnxruntime()
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # inference gives up on some models; untyped outputs still run
        return {}
    graph = inferred.graph
    return {info.name: info.type.tensor_type.elem_type
            for info in (*graph.value_info, *graph.output, *graph.input)
            if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type}


def _node_outputs(graph: Any) -> list[LayerOutput]:
    """:class:`LayerOutput` records of ``graph``'s nodes, in topological order.

    Initializers are constants even where the graph also lists them as inputs (as older
    exporters do): OpenVINO's frontend makes them Constants, never Parameters."""
    constant = {t.name for t in graph.initializer}
    constant |= {t.values.name for t in graph.sparse_initializer}
    found = []
    for node in _topological(graph):
        inputs = [n for n in (*node.input, *_outer_names(node)) if n]
        folded = node.op_type == "Constant" if not inputs else all(
            n in constant for n in inputs)
        if folded:
            constant.update(n for n in node.output if n)
        kind = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        layer = node.name or next((n for n in node.output if n), "")
        found += [LayerOutput(layer, port, frozenset({name}), None, kind, folded)
                  for port, name in enumerate(node.output) if name]
    return found


def _topological(graph: Any) -> list[Any]:
    """The nodes of ``graph`` in an order where each comes after what feeds it (the file's
    order where the file is already sorted, as ONNX asks), subgraph reads counted."""
    nodes = list(graph.node)
    producer = {name: i for i, node in enumerate(nodes) for name in node.output if name}
    needs = [{producer[n] for n in (*node.input, *_outer_names(node)) if n in producer} - {i}
             for i, node in enumerate(nodes)]
    done: set[int] = set()
    order = []
    pending = list(range(len(nodes)))
    while pending:
        left = []
        for i in pending:
            if needs[i] <= done:
                done.add(i)
                order.append(nodes[i])
            else:
                left.append(i)
        if len(left) == len(pending):  # a cycle: keep the file's order for the rest
            order += [nodes[i] for i in left]
            break
        pending = left
    return order


def _outer_names(node: Any) -> set[str]:
    """The names a node's subgraphs read from the scopes around them."""
    names: set[str] = set()
    for attr in node.attribute:
        for body in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
            defined = {v.name for v in (*body.input, *body.initializer)}
            for inner in body.node:
                names |= {n for n in (*inner.input, *_outer_names(inner))
                          if n and n not in defined}
                defined |= set(inner.output)
    return names


def _tensor(output: LayerOutput) -> str:
    return next(iter(output.tensor_names))


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
