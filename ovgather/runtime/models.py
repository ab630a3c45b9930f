"""Whole IRs on the OpenVINO CPU plugin: compiled with extra outputs at chosen layers and
run (:func:`run_model_with_outputs`), or compiled once and run at several input sizes for
the shapes of those outputs (:class:`OutputShapes`). Compile settings and the ``openvino``
import are ``runtime.core``'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError
from .core import compile_model, core, first_line, openvino, run_request

__all__ = ["ModelRun", "read_model", "run_model_with_outputs", "OutputShapes", "STATE",
           "clear_legacy_names"]

#: A feed keyed ``(STATE, variable_id)`` is the value that variable holds before the run.
STATE = "state"


@dataclass
class ModelRun:
    """A whole IR run on the CPU: the inputs fed and the tensors at the asked outputs."""

    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    partial_shapes: dict[str, str] = field(default_factory=dict)


def read_model(xml_path: str) -> Any:
    """``ov.Core().read_model`` with its error as a RuntimeBridgeError."""
    try:
        return core().read_model(xml_path)
    except RuntimeError as err:
        raise RuntimeBridgeError(
            f"OpenVINO could not read the model: {first_line(err)}", file=xml_path
        ) from err


def _with_outputs(model: Any, wanted: Sequence[tuple[str, int]]
                  ) -> tuple[dict[str, Any], list[tuple[str, int]], dict[tuple[str, int], int]]:
    """Add an extra output at each ``(layer friendly name, output position)`` of
    ``wanted``: the layers by unique name, the outputs added, and the result slot of
    each output. Layers whose name is not unique are left out: they cannot be told apart."""
    counts: dict[str, int] = {}
    for op in model.get_ops():
        counts[op.get_friendly_name()] = counts.get(op.get_friendly_name(), 0) + 1
    by_name = {op.get_friendly_name(): op for op in model.get_ops()
               if counts[op.get_friendly_name()] == 1}
    asked = [(n, i) for n, i in wanted if n in by_name and i < by_name[n].get_output_size()]
    if asked:
        model.add_outputs([by_name[n].output(i) for n, i in asked])
        clear_legacy_names(model)
    slot: dict[tuple[str, int], int] = {}
    for k, result in enumerate(model.get_results()):
        source = result.input_value(0)
        slot.setdefault((source.get_node().get_friendly_name(), source.get_index()), k)
    return by_name, asked, slot


def clear_legacy_names(model: Any) -> bool:
    """Let an IR v10 with extra outputs compile: OpenVINO names each output of a v10
    model after the layer that makes it (its legacy name) besides its tensor names, and
    refuses to compile when such a name is a tensor name of another input or output
    ("Model operation names have collisions with tensor names"), which old IRs' names
    often are once every layer is an output. The outputs are found by position here, never
    by name, so the model is marked an IR v11 (no legacy names) when they would collide;
    nothing else of the model changes. True when it was."""
    if not model.has_rt_info("version") or model.get_rt_info("version").astype(int) != 10:
        return False
    leaves: set[str] = set()
    for port in [p.output(0) for p in model.get_parameters()] + \
            [r.output(0) for r in model.get_results()]:
        leaves.update(port.get_names())
    for result in model.get_results():
        source = result.input_value(0)
        node = source.get_node()
        legacy = node.get_friendly_name() + (f".{source.get_index()}"
                                             if node.get_output_size() > 1 else "")
        if legacy in leaves and legacy not in result.output(0).get_names():
            model.set_rt_info(11, "version")
            return True
    return False


def _cut(model: Any, by_name: Mapping[str, Any], asked: Sequence[tuple[str, int]]
         ) -> tuple[Any, dict[tuple[str, int], int]]:
    """A model of ``model``'s Parameters whose only outputs are ``asked``, and the result
    slot of each."""
    ov = openvino()
    results = [ov.opset1.result(by_name[n].output(i)) for n, i in asked]
    return (ov.Model(results, list(model.get_parameters()), f"{model.get_friendly_name()}-cut"),
            {key: k for k, key in enumerate(asked)})


def _reshape_to(model: Any, shapes: Mapping[Any, tuple[int, ...]], xml_path: str) -> None:
    """Reshape the Parameters (their outputs, keys of ``shapes``) to static shapes."""
    if not shapes:
        return
    try:
        model.reshape({port: openvino().PartialShape(list(shape))
                       for port, shape in shapes.items()})
    except RuntimeError as err:
        raise RuntimeBridgeError(f"OpenVINO could not reshape the model: "
                                 f"{first_line(err)}", file=xml_path) from err


def run_model_with_outputs(
    xml_path: str,
    layer_names: Sequence[str],
    make_input: Any,
    *,
    threads: int | None = None,
) -> ModelRun:
    """Compile the IR at ``xml_path`` with an extra output at output 0 of every layer in
    ``layer_names`` (by friendly name), feed ``make_input(name, partial_shape_text,
    dtype)`` to each Parameter and return what those layers produced. A dynamic-rank
    Parameter is reshaped to the array made for it (the CPU plugin needs a rank)."""
    model = read_model(xml_path)
    by_name, asked, slot = _with_outputs(model, [(name, 0) for name in layer_names])
    run = ModelRun(partial_shapes={n: str(by_name[n].get_output_partial_shape(0))
                                   for n, _ in asked})
    feed, reshape = [], {}
    for param in model.get_parameters():
        name = param.get_friendly_name()
        array = make_input(name, str(param.get_partial_shape()),
                           param.get_element_type().to_dtype())
        if param.get_partial_shape().rank.is_dynamic:
            reshape[param.output(0)] = array.shape
        run.inputs[name] = array
        feed.append(array)
    _reshape_to(model, reshape, xml_path)
    request = run_request(compile_model(model, threads), feed)
    for key in asked:  # only these are copied out: the model's own outputs stay put
        run.outputs[key[0]] = request.get_output_tensor(slot[key]).data.copy()
    return run


class OutputShapes:
    """The IR at ``xml_path`` with an extra output at each ``(layer friendly name, output
    position)`` of ``wanted``, compiled once and run on one set of inputs after another:
    ``shapes(feeds)`` gives each output's shape as text (``[2,3]``); ``asked`` lists the
    outputs added (a layer whose friendly name is not unique cannot be asked for);
    ``partial_shapes`` gives OpenVINO's partial shape of each, as read. With ``cut`` the
    model's own outputs (and state writes) are dropped: it ends at the asked outputs, so
    only the layers they depend on run (how a crash is traced to its layer).

    The model is compiled as it is, its dynamic dims dynamic, so every input size runs on
    the same compiled model; only when the CPU plugin refuses a dynamic rank is it
    reshaped to each run's sizes and compiled for them. With ``ranks_only`` the
    Parameters of dynamic rank alone are reshaped to each run's sizes, before any compile,
    and every other dim stays dynamic. ``compiles`` counts the compiles.
    Each run is a new infer request: a stateful model starts from its initial states, as
    a first call does.
    """

    def __init__(self, xml_path: str, wanted: Sequence[tuple[str, int]], *,
                 threads: int | None = None, ranks_only: bool = False,
                 cut: bool = False) -> None:
        self.xml_path, self.threads, self.compiles = xml_path, threads, 0
        self.model = read_model(xml_path)
        by_name, self.asked, self._slot = _with_outputs(self.model, wanted)
        if cut:
            self.model, self._slot = _cut(self.model, by_name, self.asked)
        self.partial_shapes = {(n, i): str(by_name[n].get_output_partial_shape(i))
                               for n, i in self.asked}
        self._params = list(self.model.get_parameters())
        self._compiled: Any = None
        self._failed: RuntimeBridgeError | None = None
        #: positions of the Parameters reshaped to each run's sizes (None: all of them,
        #: once the plugin refuses a dynamic rank)
        self._reshaped = ({k for k, p in enumerate(self._params)
                           if p.get_partial_shape().rank.is_dynamic} if ranks_only else None)
        self._per_size = bool(self._reshaped)  # compile per size
        self._sizes: tuple | None = None  # what the model was last reshaped to

    def shapes(self, sizes: Mapping[str, Sequence[int]],
               make: Callable[[], Mapping[str, np.ndarray]]) -> dict[tuple[str, int], str]:
        """Run on the arrays ``make()`` gives (by Parameter friendly name), of ``sizes``:
        they are made once the model is compiled for those sizes (a size the runtime
        refuses costs no data)."""
        shape = tuple(tuple(sizes[p.get_friendly_name()]) for p in self._params)
        if self._compiled is None or (self._per_size and self._sizes != shape):
            self._compiled = None  # one compiled model at a time
            self._compiled = self.compile_model(shape)
        feeds = make()
        feed = [feeds[p.get_friendly_name()] for p in self._params]
        states = {key[1]: v for key, v in feeds.items() if isinstance(key, tuple)
                  and key[0] == STATE}  # a tuple key: never a Parameter's name
        request = run_request(self._compiled, feed, states)  # shapes only: nothing copied
        return {key: "[" + ",".join(map(str, request.get_output_tensor(self._slot[key]).shape))
                + "]" for key in self.asked if key in self._slot}

    def compile_model(self, sizes: tuple) -> Any:
        if self._failed is not None:  # the plugin refused the model: it will again
            raise self._failed
        if not self._per_size:
            self.compiles += 1
            try:
                return compile_model(self.model, self.threads)
            except RuntimeBridgeError as err:
                if "rank" not in err.message:
                    self._failed = err
                    raise
                self._per_size = True
        # the CPU plugin compiles no node of dynamic rank: reshape to the sizes run
        _reshape_to(self.model, {p.output(0): s for k, (p, s) in
                                 enumerate(zip(self._params, sizes, strict=True))
                                 if self._reshaped is None or k in self._reshaped},
                    self.xml_path)
        self._sizes = sizes
        self.compiles += 1
        return compile_model(self.model, self.threads)
