"""What the passes build and read around a layer: small i64 shape subgraphs (ShapeOf,
StridedSlice, Concat) that compute a target shape at run time, and the inferred shape
reaching a layer's input.

Both the GatherND conversion and the reshape fixes compute targets at run time with the
same three layers, so they are built in one place.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from ..edit import add_const, add_layer
from ..element_types import precision_of
from ..graph import output_port

__all__ = ["I64", "first_output", "shape_layer", "shape_of", "slice_of", "concat"]

I64 = precision_of("i64")


def first_output(G: nx.MultiDiGraph, node: str) -> int:
    """The id of ``node``'s first output port."""
    return G.nodes[node]["outputs"][0]["id"]


def shape_layer(G: nx.MultiDiGraph, op_type: str, version: str, inputs: list, dims: tuple,
                data: dict | None = None, name: str | None = None, precision: str = I64) -> str:
    """A one-output layer (i64 unless ``precision`` says otherwise) with ``dims``."""
    return add_layer(G, op_type, version, data=data or {}, inputs=inputs,
                     outputs=[{"precision": precision, "dims": dims}], name=name)


def slice_of(G: nx.MultiDiGraph, shape: str, start: int, stop: int | None, name: str) -> str:
    """``shape[start:stop]`` with a StridedSlice-1 (``stop=None``: to the end)."""
    consts = [add_const(G, np.array([v], dtype=np.int64), name=f"{name}/{part}")
              for part, v in (("begin", start), ("end", stop or 0), ("stride", 1))]
    total = output_port(G, shape, first_output(G, shape))["dims"][0]
    if total >= 0:
        length = len(range(total)[start:stop])
    else:  # unknown rank: only a head slice has a known length
        length = -1 if stop is None else stop - start
    return shape_layer(
        G, "StridedSlice", "opset1", [(shape, first_output(G, shape))] + [(c, 0) for c in consts],
        (length,), name=name,
        data={"begin_mask": "0", "end_mask": "0" if stop is not None else "1",
              "new_axis_mask": "", "shrink_axis_mask": "", "ellipsis_mask": ""})


def shape_of(G: nx.MultiDiGraph, source: tuple[str, int], rank: int | None, name: str) -> str:
    """ShapeOf-3 (i64) of the output port ``source``; ``rank`` None when not known."""
    return shape_layer(G, "ShapeOf", "opset3", [source], (-1 if rank is None else rank,),
                       data={"output_type": "i64"}, name=name)


def concat(G: nx.MultiDiGraph, parts: list[str], rank: int | None, name: str) -> str:
    """Concat-1 of the 1-D ``parts`` on axis 0: a shape of ``rank`` dims."""
    return shape_layer(G, "Concat", "opset1", [(p, first_output(G, p)) for p in parts],
                       (-1 if rank is None else rank,), data={"axis": "0"}, name=name)
