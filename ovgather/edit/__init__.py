"""The editing API: graph surgery on an IR graph, free functions that change the
``networkx.MultiDiGraph`` in place, a module per verb family; and ``extract``.

A module per verb family: ``add`` (add_layer, insert_after), ``constants`` (add_const,
set_const), ``replace`` (replace_layer, replace_uses, bypass, remove_layer), ``names``
(rename_input, rename_output), ``cleanup`` (cleanup, reinfer), ``base`` what they share
(find_layers, connect, unique_name, editing); ``extract`` cuts a standalone IR around
layers.

The surface is small on purpose (as onnx-graphsurgeon's): find layers, add a layer or a
Const, insert a layer after an output port, make the readers of one output read another,
bypass, replace or remove a layer, drop what no output needs, set a Const's data, rename
the model's inputs and outputs, and re-infer the shapes afterwards. Every function edits
the graph in place and follows the schema in :mod:`ovgather.graph`; a wrong argument is a
RewriteError naming the layer, raised before the graph changes. A TensorIterator, Loop or
If body is edited as the graph it is (``graph.locate`` finds it from a body path).
docs/api.md shows each function at work.

One invariant holds after every call: the tensor names of a rewired output port, and the
friendly name of the layer that produced it, move to the layer that now produces the
same tensor. Results and downstream code therefore see the same names; the displaced
layer gets a derived name (``"gnd/orig"``), unique in the graph.

>>> import networkx as nx, numpy as np
>>> G = nx.MultiDiGraph()
>>> p = add_layer(G, "Parameter", "opset1", data={"shape": "2,3", "element_type": "f32"},
...               outputs=[{"precision": "FP32", "dims": (2, 3)}], name="x")
>>> c = add_const(G, np.array([6], dtype=np.int64), name="target")
>>> r = add_layer(G, "Reshape", "opset1", data={"special_zero": "false"},
...               inputs=[(p, 0), (c, 0)], outputs=[{"precision": "FP32", "dims": (6,)}])
>>> find_layers(G, type="Reshape", special_zero="false") == [r]
True
>>> G.nodes[r]["name"], G.nodes[c]["data"]["shape"]
('Reshape', '1')
"""

from __future__ import annotations

from .add import add_layer, insert_after
from .base import PRECISIONS, connect, editing, find_layers, unique_name
from .cleanup import SINKS, cleanup, reinfer
from .constants import add_const, set_const
from .names import rename_input, rename_output
from .replace import bypass, remove_layer, replace_layer, replace_uses

__all__ = [
    "find_layers",
    "add_layer",
    "add_const",
    "connect",
    "insert_after",
    "replace_layer",
    "remove_layer",
    "bypass",
    "replace_uses",
    "rename_input",
    "rename_output",
    "set_const",
    "cleanup",
    "reinfer",
    "unique_name",
    "editing",
    "PRECISIONS",
    "SINKS",
]
