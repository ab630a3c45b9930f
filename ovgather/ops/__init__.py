"""The gather-family ops: one file per family, each a pure function of shapes and attributes.

``gather_nd`` (GatherND-5/8 and the ONNX views), ``gather_elements`` (GatherElements-6),
``gather`` (Gather-1/7/8), and ``registry`` (which version an IR ``version`` string
selects). Nothing here knows about XML, networkx or openvino.
"""

from __future__ import annotations

from .gather import gather_shape, infer_gather
from .gather_elements import gather_elements_shape, infer_gather_elements
from .gather_nd import gather_nd_shape, infer_gather_nd, onnx_gather_nd_shape
from .registry import op_version

__all__ = [
    "gather_nd_shape",
    "onnx_gather_nd_shape",
    "gather_elements_shape",
    "gather_shape",
    "infer_gather_nd",
    "infer_gather_elements",
    "infer_gather",
    "op_version",
]
