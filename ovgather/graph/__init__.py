"""The data model: an OpenVINO IR as a plain ``networkx.MultiDiGraph``.

``schema`` documents the graph (its docstring is the specification) and builds layers and
ports; ``bodies`` holds the queries over TensorIterator/Loop/If bodies; ``queries``
finds the layer a user names; ``writable`` is the
check made before a graph is written. Nothing here reads files or infers shapes.
"""

from .bodies import BODIES, bodies_of, body_layers, inside_words, locate, walk_bodies
from .queries import find_layer, gather_types, source_file
from .schema import *  # noqa: F403
from .schema import __all__ as _schema_all
from .writable import check_writable

__all__ = [*_schema_all, "check_writable", "BODIES", "bodies_of", "walk_bodies",
           "body_layers", "inside_words", "locate", "find_layer", "gather_types", "source_file"]
