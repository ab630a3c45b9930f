"""Constants: ``add_const`` makes a Const from an array, ``set_const`` replaces a Const's data."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..errors import RewriteError
from .add import add_layer
from .base import PRECISIONS, _node
from .cleanup import _copy_dims

__all__ = ["add_const", "set_const"]


def add_const(G: nx.MultiDiGraph, array: Any, name: str | None = None) -> str:
    """Add a Const holding ``array``; ``ir.write_ir`` appends its bytes to the .bin.

    The element type, shape and port precision come from the array's dtype and shape;
    the data stays in the node's ``value`` attribute until the graph is written.
    """
    value = _const_array(array)
    element_type, precision = PRECISIONS[value.dtype.name]
    node = add_layer(
        G, "Const", "opset1",
        data={"element_type": element_type, "shape": ", ".join(map(str, value.shape))},
        outputs=[{"precision": precision, "dims": value.shape}],
        name=name or "Constant",
    )
    G.nodes[node]["value"] = value
    return node


def set_const(G: nx.MultiDiGraph, node: str, array: Any) -> None:
    """Give Const ``node`` the data ``array``: its value, element type, shape attribute
    and output port (precision, dims) change together, and the input ports that read it
    take the new dims. ``write_ir`` writes the new bytes to the .bin; ``const_value``
    reads them back. Run :func:`reinfer` when the shape changed what follows.
    """
    _node(G, node, "the Const to set")
    attrs = G.nodes[node]
    if attrs.get("type") not in ("Const", "Constant"):
        raise RewriteError(f"set_const changes a Const, but this layer is a {attrs.get('type')}",
                           layer_name=attrs.get("name"), layer_id=node)
    value = _const_array(array)
    element_type, precision = PRECISIONS[value.dtype.name]
    data = attrs.setdefault("data", {})
    data["element_type"] = element_type
    data["shape"] = ", ".join(map(str, value.shape))
    port = attrs["outputs"][0]
    port["precision"], port["dims"] = precision, tuple(value.shape)
    attrs["value"] = value
    for _, consumer, key in G.out_edges(node, keys=True):
        _copy_dims(G, (node, key[0]), (consumer, key[1]))


def _const_array(array: Any) -> np.ndarray:
    try:
        value = np.asarray(array).copy(order="C")
    except (TypeError, ValueError) as err:
        raise RewriteError(f"a Const holds an array, but {array!r} is not one: {err}") from None
    if value.dtype.name not in PRECISIONS:
        raise RewriteError(f"a Const holds one of the types {sorted(PRECISIONS)}, "
                           f"but got dtype {value.dtype.name}")
    return value
