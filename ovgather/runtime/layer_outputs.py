"""What a per-layer comparison needs from a model it runs, whatever runs it (OpenVINO's CPU
plugin for an IR, ONNX Runtime for an ``.onnx`` file): every layer output in topological
order, and the values of any chosen set of them for one set of inputs.

The two sides of ``compare --all-layers`` pair their :class:`LayerOutput` records by a tensor
name in common, else by the layer's name and port, else (a layer the reader made and
named by a counter) by what it reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

__all__ = ["LayerOutput", "LayerRunner"]


@dataclass(frozen=True)
class LayerOutput:
    """One output port of one layer (an IR layer, or an ONNX node).

    ``layer`` is the layer's name (the IR's friendly ``name``, the ONNX node's ``name``, or
    its first output's name when the node has none), ``port`` the output's index among the
    layer's outputs, ``tensor_names`` the names the output tensor answers to, ``line`` the
    1-based XML line of the layer (``None`` where the file is not XML), ``type`` the op
    type, and ``constant`` whether only constants feed it, so that a runtime folds it and
    nothing is run to compare. ``sources``: what each input reads, ``(layer, port)`` of a
    layer output, ``("", k)`` for the model's k-th input, ``None`` for a constant (not
    part of equality: a record is its layer's name and port)."""

    layer: str
    port: int
    tensor_names: frozenset[str]
    line: int | None
    type: str
    constant: bool
    sources: tuple[tuple[str, int] | None, ...] = field(default=(), compare=False)


class LayerRunner(Protocol):
    """A model that can run with any of its layer outputs exposed."""

    def outputs(self) -> Sequence[LayerOutput]:
        """Every output of every layer, in topological order (Results and the model's
        Parameters excluded)."""
        ...

    def run(self, feeds: Mapping[str, np.ndarray],
            wanted: Sequence[LayerOutput]) -> dict[LayerOutput, np.ndarray]:
        """Run once on ``feeds`` (keyed by input name) and return the value of each wanted
        output. A caller asks for a bounded set at a time, to stay within memory."""
        ...
