"""A whole model read from a file (an IR ``.xml`` or an ``.onnx`` model) or from a graph,
run on the CPU plugin with every output returned: what ``compare`` runs on each side.

Inputs and outputs are described as OpenVINO shows them (:class:`Tensor`): an input by its
Parameter's friendly name and its tensor names, an output by its tensor names (the Result's
friendly name only when the port has none, as a name OpenVINO made up says nothing about
which tensor it is).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..errors import IRError, RuntimeBridgeError
from .core import compile_model, first_line, openvino, run_request, tensor_values
from .feeding import _spec, _table
from .interop import ONNX_SUFFIXES, _convert_onnx, to_openvino
from .models import read_model

__all__ = ["Tensor", "RunnableModel", "IRBytes", "ir_bytes", "index_bounds", "port_bytes"]


@dataclass(frozen=True)
class Tensor:
    """One input or output of a model: ``name`` the one OpenVINO shows first
    (``get_any_name()``, or the friendly name), ``names`` every name it answers to,
    ``shape`` its partial shape as text, ``element_type`` OpenVINO's name (``f32``)."""

    name: str
    names: frozenset[str]
    shape: str
    element_type: str


def _input(param: Any) -> Tensor:
    out = param.output(0)
    names = set(out.get_names())
    friendly = param.get_friendly_name()
    name = out.get_any_name() if names else friendly
    return Tensor(name, frozenset({friendly, *names}), str(param.get_partial_shape()),
                  param.get_element_type().get_type_name())


def _output(result: Any) -> Tensor:
    out = result.output(0)
    names = set(out.get_names())
    name = out.get_any_name() if names else result.get_friendly_name()
    return Tensor(name, frozenset(names or {name}), str(out.get_partial_shape()),
                  out.get_element_type().get_type_name())


class IRBytes(NamedTuple):
    """An IR in memory (what ``write_ir`` writes for a graph) and the path of the file the
    graph was read from: a graph sent to the runtime worker as the bytes it is run as."""

    xml: bytes
    weights: bytes
    path: str | None


def ir_bytes(G: Any) -> IRBytes:
    """The :class:`IRBytes` of an ovgather graph."""
    from .interop import _ir_bytes

    xml, weights = _ir_bytes(G)
    return IRBytes(xml, weights, G.graph.get("xml_path"))


def _read(source: Any) -> tuple[Any, str | None]:
    """The ``openvino.Model`` of ``source`` (a path, an ovgather graph or
    :class:`IRBytes`) and its path."""
    if isinstance(source, IRBytes):
        ov = openvino()
        weights = ov.Tensor(np.frombuffer(source.weights, dtype=np.uint8).copy()) \
            if source.weights else ov.Tensor(np.zeros(0, dtype=np.uint8))
        try:
            return ov.Core().read_model(model=source.xml.decode("utf-8"),
                                        weights=weights), source.path
        except Exception as err:
            raise RuntimeBridgeError(f"openvino could not read the model ovgather wrote: "
                                     f"{first_line(err)}", file=source.path) from err
    if not isinstance(source, (str, os.PathLike)):
        return to_openvino(source), source.graph.get("xml_path")
    path = Path(source)
    if not path.is_file():
        raise IRError("the model file does not exist", file=str(path))
    if path.suffix.lower() in ONNX_SUFFIXES:
        return _convert_onnx(path), str(path)
    return read_model(str(path)), str(path)


class RunnableModel:
    """A model as OpenVINO reads it, compiled on first :meth:`run` and run on inputs
    given by position. ``inputs`` and ``outputs`` describe it (:class:`Tensor`).

    A Parameter of dynamic rank is reshaped to each run's array before a compile (the
    CPU plugin compiles no dynamic rank); otherwise one compile serves every size.
    """

    def __init__(self, source: Any, threads: int | None = None) -> None:
        self.model, self.path = _read(source)
        self.threads = threads
        self._compiled: Any = None
        self._request: Any = None  # the last run's, while its outputs are in use
        self._ranks = [k for k, p in enumerate(self.model.get_parameters())
                       if p.get_partial_shape().rank.is_dynamic]
        self._run_bytes: dict[tuple, tuple[int, int] | None] = {}  # see run_bytes
        self._refresh()

    def _refresh(self) -> None:
        self.inputs = [_input(p) for p in self.model.get_parameters()]
        self.outputs = [_output(r) for r in self.model.get_results()]

    def reshape(self, shapes: Mapping[int, str]) -> None:
        """Set the partial shapes of the inputs at the positions of ``shapes``, as
        ``openvino.Model.reshape`` does (OpenVINO's refusal is a RuntimeBridgeError)."""
        if not shapes:
            return
        ov, params = openvino(), self.model.get_parameters()
        try:
            self.model.reshape({params[k].output(0): ov.PartialShape(text)
                                for k, text in shapes.items()})
        except RuntimeError as err:
            asked = ", ".join(f"{self.inputs[k].name}={text}" for k, text in shapes.items())
            raise RuntimeBridgeError(f"OpenVINO could not reshape the model to {asked}: "
                                     f"{first_line(err)}", file=self.path) from err
        self._ranks = [k for k in self._ranks if k not in shapes or
                       params[k].get_partial_shape().rank.is_dynamic]
        self._compiled = None
        self._refresh()

    def compile(self) -> None:
        """Compile now when one compile serves every size (no input of dynamic rank), so
        that a model the plugin refuses fails before any input is made."""
        if self.needs_compile():
            self._compiled = self._compile()

    def needs_compile(self) -> bool:
        """:meth:`compile` would compile (and :meth:`compiled` may take the result)."""
        return not self._ranks and self._compiled is None

    def compiled(self, result: Any) -> None:
        """Take the result of compiling ``self.model`` elsewhere (``compile_models``):
        the compiled model, or the RuntimeBridgeError, raised here as :meth:`compile`
        raises it."""
        if isinstance(result, RuntimeBridgeError):
            result.located(file=self.path)
            raise result
        self._compiled = result

    def _compile(self) -> Any:
        try:
            return compile_model(self.model, self.threads)
        except RuntimeBridgeError as err:
            err.located(file=self.path)
            raise

    def run(self, feed: Sequence[np.ndarray], *, copy: bool = True) -> list[np.ndarray]:
        """Every output of the model (in ``outputs`` order) for the arrays of ``feed``.
        ``copy=False`` hands back the runtime's own output memory instead of copies: the
        arrays stay valid until the next run of this model (its request is kept)."""
        if self._ranks:
            params = self.model.get_parameters()
            try:
                self.model.reshape({params[k].output(0): openvino().PartialShape(
                    list(feed[k].shape)) for k in self._ranks})
            except RuntimeError as err:
                raise RuntimeBridgeError(f"OpenVINO refused the input ranks "
                                         f"{[feed[k].ndim for k in self._ranks]}: "
                                         f"{first_line(err)}", file=self.path) from err
            self._compiled = self._compile()
        else:
            self.compile()
        try:
            request = run_request(self._compiled, feed)
        except RuntimeBridgeError as err:
            err.located(file=self.path)
            raise
        self._request = None if copy else request
        outs = [tensor_values(request.get_output_tensor(i))
                for i in range(len(self._compiled.outputs))]
        return [o.copy() for o in outs] if copy else outs

    def run_bytes(self, shapes: Sequence[Sequence[int]]) -> tuple[int, int] | None:
        """The bytes of the outputs of one run on inputs of ``shapes`` (by input position)
        and of its largest other tensor, from OpenVINO's shape inference on a copy of the
        model reshaped to them; None when OpenVINO cannot reshape the copy (the run will
        say why). A shape OpenVINO leaves dynamic counts its upper bound, or 0 when it has
        none."""
        key = tuple(tuple(int(d) for d in s) for s in shapes)
        if key not in self._run_bytes:
            self._run_bytes[key] = self._measure(shapes)
        return self._run_bytes[key]

    def largest_tensor(self, shapes: Sequence[Sequence[int]]) -> int | None:
        """The largest tensor of a run at ``shapes`` when :meth:`run_bytes` measured it,
        else None: every layer output is at most that (0: some size is not known)."""
        found = self._run_bytes.get(tuple(tuple(int(d) for d in s) for s in shapes))
        return found[1] if found else None

    def _measure(self, shapes: Sequence[Sequence[int]]) -> tuple[int, int] | None:
        ov = openvino()
        copy = self.model.clone()
        try:
            copy.reshape({p.output(0): ov.PartialShape([int(d) for d in s])
                          for p, s in zip(copy.get_parameters(), shapes, strict=True)})
        except RuntimeError:
            return None
        outputs = biggest = 0
        for op in copy.get_ordered_ops():
            kind = op.get_type_name()
            if kind in ("Constant", "Parameter"):
                continue
            if kind == "Result":
                outputs += port_bytes(op.input_value(0))
                continue
            biggest = max([biggest, *(port_bytes(o) for o in op.outputs())])
        return outputs, biggest


def port_bytes(output: Any) -> int:
    """Bytes of a tensor of ``output``'s partial shape (its upper bounds), 0 unknown."""
    shape, etype = output.get_partial_shape(), output.get_element_type()
    if shape.is_static:  # the usual case after a reshape to sizes: one call
        return int(math.prod(shape.to_shape()) * max(1, etype.bitwidth) / 8) \
            if etype.is_static() else 0
    if shape.rank.is_dynamic or not etype.is_static():
        return 0
    total = max(1, etype.bitwidth) / 8
    for dim in shape:
        top = dim.get_max_length()
        if top < 0 or top >= 1 << 62:
            return 0
        total *= top
    return int(total)


def index_bounds(model: Any, shapes: Sequence[Sequence[int]]
                 ) -> list[tuple[int, int, str] | None]:
    """For each Parameter of ``model`` (by position), the values ``[low, high)`` its
    elements may take where they reach the indices of a gather or an embedding bag whose
    table has a known size at the input ``shapes`` (``x + shift`` in ``[-size, size)``:
    negative indices count from the end), with the layer that bounds it; None where no
    such table is reached (or OpenVINO cannot reshape a copy to ``shapes``). GatherND's
    bound is its largest indexed dim: a column of its indices may reach that far."""
    from .feeding import _carries, _offset, _readers

    ov, copy = openvino(), model.clone()
    try:
        copy.reshape({p.output(0): ov.PartialShape([int(d) for d in s])
                      for p, s in zip(copy.get_parameters(), shapes, strict=True)})
    except RuntimeError:
        return [None] * len(copy.get_parameters())
    out: list[tuple[int, int, str] | None] = []
    for param in copy.get_parameters():
        if not param.get_element_type().is_integral():
            out.append(None)
            continue
        low, high, why = None, None, ""
        todo, seen = [(param.output(0), 0)], set()
        while todo:
            output, shift = todo.pop()
            for node, index in _readers(output):
                key = (node.get_name(), index, shift)
                if key in seen:
                    continue
                seen.add(key)
                size = _table_size(node, index)
                if size is not None:
                    lo, hi = -size - shift, size - shift
                    if high is None or hi < high:
                        high, why = hi, f"{node.get_type_name()} " \
                            f"'{node.get_friendly_name()}' (a table of {size})"
                    low = lo if low is None else max(low, lo)
                    continue
                step = _offset(node, index)
                if step is not None:
                    todo += [(o, shift + step) for o in node.outputs()]
                elif _carries(node, index) and not (index == 1 and _is_table(node)):
                    todo += [(o, shift) for o in node.outputs()]
        out.append(None if high is None or low is None else (low, high, why))
    return out


def _is_table(node: Any) -> bool:
    spec = _spec(node)
    return spec is not None and spec.table_rows is not None


def _table_size(node: Any, index: int) -> int | None:
    """The entries input ``index`` of ``node`` may index when that size is known (the op's
    spec says which inputs hold indices: ``OpSpec.table_rows``, at its widest), else None
    (no bound known: nothing is refused)."""
    return _table(node, index, widest=True)
