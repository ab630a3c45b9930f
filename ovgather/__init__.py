"""ovgather: OpenVINO IR models as networkx graphs, centred on the gather family.

Read an IR into a ``networkx.MultiDiGraph``, re-infer every layer's output shape and
compare it with the dims the IR declares, rewrite the graph (GatherND-5 ⇄ GatherND-8),
and prove the gather layers against the OpenVINO CPU runtime.
"""

from __future__ import annotations

from . import errors, graph, shapes
from .errors import (
    IRError,
    IRStructureError,
    OvgatherError,
    ShapeError,
    ShapeInferenceError,
    ShapeParseError,
    UnsupportedOpError,
    WeightsError,
    XMLSyntaxError,
)
from .shapes import Dimension, PartialShape

__version__ = "0.1.0"

__all__ = [
    # shapes
    "Dimension",
    "PartialShape",
    # errors
    "OvgatherError",
    "IRError",
    "XMLSyntaxError",
    "IRStructureError",
    "WeightsError",
    "ShapeError",
    "ShapeParseError",
    "ShapeInferenceError",
    "UnsupportedOpError",
    # modules
    "errors",
    "graph",
    "shapes",
]
