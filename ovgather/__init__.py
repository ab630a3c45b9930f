"""ovgather: OpenVINO IR models as networkx graphs, centred on the gather family.

Read an IR into a ``networkx.MultiDiGraph``, re-infer every layer's output shape and
compare it with the dims the IR declares, rewrite the graph (GatherND-5 ⇄ GatherND-8),
and prove the gather layers against the OpenVINO CPU runtime.
"""

from __future__ import annotations

from . import errors, graph, reference, shapes
from .errors import *  # noqa: F403 (the whole exception family, listed in errors.__all__)
from .infer import CheckReport, check, infer_shapes
from .interop import from_openvino, load_model, to_openvino
from .ir import const_value, parse_ir, read_ir, write_ir
from .ops import gather_elements_shape, gather_nd_shape, gather_shape, onnx_gather_nd_shape
from .passes import ConvertGatherND, Pass, PassResult, convert_gather_nd
from .rewrite import (
    add_const,
    add_layer,
    find_layers,
    insert_after,
    reinfer,
    remove_layer,
    replace_layer,
)
from .shapes import Dimension, PartialShape

__version__ = "0.1.0"

__all__ = [
    "read_ir", "parse_ir", "write_ir", "const_value", "check", "infer_shapes", "CheckReport",
    "gather_nd_shape", "gather_elements_shape", "gather_shape", "onnx_gather_nd_shape",
    "convert_gather_nd", "ConvertGatherND", "Pass", "PassResult", "find_layers", "add_layer",
    "add_const", "insert_after", "replace_layer", "remove_layer", "reinfer",
    "from_openvino", "to_openvino", "load_model", "reference",
    # shapes
    "Dimension",
    "PartialShape",
    # errors: the whole family
    *errors.__all__,
    # modules
    "errors",
    "graph",
    "shapes",
]
