"""The data model: an OpenVINO IR as a plain ``networkx.MultiDiGraph``.

``schema`` documents the graph (its docstring is the specification) and builds layers and
ports; ``bodies`` holds the queries over TensorIterator/Loop/If bodies; ``queries``
finds the layer a user names; ``writable`` is the check made before a graph is written
(these two are imported when first asked for: a ``check`` needs neither). Nothing here
reads files or infers shapes.
"""

from .._lazy import submodule_exports
from .bodies import BODIES, bodies_of, body_layers, inside_words, locate, walk_bodies
from .schema import *  # noqa: F403
from .schema import __all__ as _schema_all

__all__ = [*_schema_all, "BODIES", "bodies_of", "walk_bodies", "body_layers", "inside_words",
           "locate", "check_writable", "find_layer", "gather_types",  # noqa: F405
           "source_file"]  # noqa: F405

__getattr__ = submodule_exports(__name__, {"check_writable": "writable", "find_layer": "queries",
                                           "gather_types": "queries", "source_file": "queries"})
