"""Layer outputs that only rearrange their input's elements, computed from the runtime's
values of their inputs instead of being exposed (``compare --all-layers``).

Every Result the CPU plugin is given stops the fusions across it and adds a node to each
of its passes: exposing every output of the 5k-layer Llama doubles its compile. About
two fifths of those outputs are data movement (Reshape, Transpose, Slice, Concat,
Broadcast …): their values are their inputs' elements moved, bit for bit. Exposed, they
cost the most compile time (the plugin fuses them into their neighbours: RoPE, MatMul
transposes, SDPA's reshapes); left out, their values are made by OpenVINO's own
reference implementation (``Node.evaluate``) from the values the run gave their inputs.
A test holds them bit-identical to the runtime's values of the same layers exposed.

What is left exposed: every layer that computes (arithmetic, the gather family, the
model's outputs), and a data-movement layer whose input is neither exposed nor derivable
(a constant-folded shape, say).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .core import openvino

__all__ = ["REARRANGING", "Derivation", "derivable"]

#: Ops whose single output is made of their data input's elements, unchanged: no
#: arithmetic, no rounding, no gather (the gather family is what ovgather proves on the
#: plugin itself, so it stays exposed).
REARRANGING = frozenset(("Reshape", "Squeeze", "Unsqueeze", "Transpose", "Slice",
                         "StridedSlice", "Concat", "Broadcast", "Tile"))
#: Float types a NumPy array holds as the runtime does (no bf16, no f8).
_PLAIN = frozenset(("f16", "f32", "f64"))


def _key(port: Any) -> tuple[Any, int]:
    return port.get_node(), port.get_index()


def derivable(ports: Sequence[Any], kept: Sequence[Any]) -> list[Any]:
    """Of ``ports`` (layer outputs, ``openvino.Output``, in topological order), those to
    compute instead of exposing: a rearranging op's single output, of a plain float
    type (shape arithmetic in integers stays exposed: it is small, and the plugin hands
    some of it over in other unit dims than the model declares), each of whose inputs
    is a Constant, one of ``ports`` left exposed or one derived before it. ``kept``:
    outputs that stay exposed whatever their op (the model's own)."""
    keep = {_key(p) for p in kept}
    known = {_key(p) for p in ports}
    out = []
    for port in ports:
        node, key = port.get_node(), _key(port)
        if key in keep or node.get_type_name() not in REARRANGING \
                or node.get_output_size() != 1 \
                or port.get_element_type().get_type_name() not in _PLAIN:
            continue
        sources = [_key(v) for v in node.input_values()]
        if all(s[0].get_type_name() == "Constant" or s in known for s in sources):
            out.append(port)
    return out


class Derivation:
    """:func:`derivable`'s ports with what each reads, looked up once (a constant's
    array, else the key of the value it takes), so that each run only evaluates.

    >>> plan = Derivation(derivable(ports, model_outputs))   # doctest: +SKIP
    >>> plan.values(exposed)                                 # doctest: +SKIP
    """

    def __init__(self, ports: Sequence[Any]) -> None:
        self.ports = list(ports)
        #: ``(node, output index)`` of each port: what the caller leaves unexposed
        self.keys = {_key(p) for p in self.ports}
        self._steps = []
        for port in self.ports:
            reads = []
            for v in port.get_node().input_values():
                source = v.get_node()
                constant = source.get_data() if source.get_type_name() == "Constant" else None
                reads.append((_key(v), constant))
            self._steps.append((_key(port), port.get_node(), port.get_element_type(), reads))

    def values(self, values: Mapping[tuple[Any, int], np.ndarray]
               ) -> dict[tuple[Any, int], np.ndarray]:
        """The value of each port, by OpenVINO's reference implementation of its op on
        its inputs' ``values`` (keyed by ``(node, output index)``, the runtime's). A port
        whose op OpenVINO cannot evaluate so (an input in other dims than the model
        declares, say) is left out: the caller runs it exposed."""
        ov = openvino()
        made: dict[tuple[Any, int], np.ndarray] = {}
        empty = ov.Shape([0])
        for key, node, element_type, reads in self._steps:
            inputs = []
            for source, constant in reads:
                array = constant if constant is not None else \
                    made.get(source, values.get(source))
                if array is None:
                    break
                array = np.asarray(array)
                # (not np.ascontiguousarray: it makes a scalar an array of one element)
                inputs.append(ov.Tensor(array if array.flags.c_contiguous
                                        else array.copy(order="C")))
            else:
                result = ov.Tensor(element_type, empty)
                try:
                    done = node.evaluate([result], inputs)
                except RuntimeError:
                    done = False
                if done:
                    made[key] = np.array(result.data, copy=True)
        return made

