"""File <-> graph: an OpenVINO IR (``.xml`` + ``.bin``) read into the ``graph`` schema and
written back. The only package that parses XML (lxml); it never infers shapes.

The data flows ``parse`` (the hardened lxml parse) -> ``reader`` (the walk that builds the
graph; ``bodies`` for TensorIterator, Loop and If; ``lines`` for exact lines) ->
``writer``; ``weights`` reads Const data from the .bin, ``text`` holds the text helpers
they share, ``compiled`` the optional compiled walk. The writer is imported when first
asked for: ``check`` only reads."""

from .._lazy import submodule_exports
from ..element_types import ELEMENT_TYPES, ElementType
from .parse import MAX_LAYERS, MAX_XML_BYTES  # noqa: F401 (docs/safety.md names them)
from .reader import parse_ir, read_ir, read_layer_graph  # noqa: F401
from .text import join_names, split_names
from .weights import const_nbytes, const_value, element_type_of, weights_bytes

__all__ = [
    "read_ir",
    "parse_ir",
    "write_ir",
    "const_value",
    "weights_bytes",
    "const_nbytes",
    "element_type_of",
    "split_names",
    "join_names",
    "ELEMENT_TYPES",
    "ElementType",
]

__getattr__ = submodule_exports(__name__, {"write_ir": "writer"})
