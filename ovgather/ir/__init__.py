"""File <-> graph: an OpenVINO IR (``.xml`` + ``.bin``) read into the ``graph`` schema and
written back. The only package that parses XML (lxml); it never infers shapes."""

from .reader import *  # noqa: F403
from .reader import MAX_XML_BYTES, __all__, read_layer_graph  # noqa: F401
