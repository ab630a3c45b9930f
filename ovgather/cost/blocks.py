"""Blocks: the layers of a model grouped by the name scope their names carry.

Converters write the module a layer came from into its name:

- OpenVINO's PyTorch frontend: ``__module.model.layers.3.self_attn/aten::linear/MatMul``
  (block ``model.layers.3.self_attn``) and ``self.model.layers.3.mlp.up_proj.weight`` for
  a weight (block ``model.layers.3.mlp.up_proj``);
- ONNX exporters and the OpenVINO Model Zoo: ``/model/layers.3/self_attn/MatMul``,
  ``data/norm/bn/Add`` (every part but the last: ``model.layers.3.self_attn``,
  ``data.norm.bn``).

A layer whose name carries no scope (``Constant_34``, ``node_add_110``) joins the block
of the first consumer that has one (a weight and its decompression join the layer that
reads them), else of its first producer that has one, else :data:`TOP`.
``depth`` keeps the first N dotted parts of every block (``model.layers.3``).

>>> scope("__module.model.layers.3.self_attn/aten::linear/MatMul")
'model.layers.3.self_attn'
>>> scope("/model/layers.3/self_attn/MatMul"), scope("data/norm/bn/Add")
('model.layers.3.self_attn', 'data.norm.bn')
>>> scope("self.model.lm_head.weight"), scope("Constant_34")
('model.lm_head', None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["scope", "assign_blocks", "TOP"]

#: the block of a layer nothing scopes
TOP = "(model)"


def scope(name: str) -> str | None:
    """The name scope of a layer name, dotted; None when it has none."""
    if name.startswith("__module."):
        head = name[9:].split("/", 1)[0]
        return head or None
    if "/" in name:
        parts = [p for p in name.strip("/").split("/")[:-1] if p and "::" not in p]
        return ".".join(parts) or None
    if name.startswith("self.") and name.count(".") > 1:
        return name[5:].rsplit(".", 1)[0]
    return None


def _cut(block: str, depth: int | None) -> str:
    if depth is None or block == TOP:
        return block
    return ".".join(block.split(".")[:depth]) or TOP


def assign_blocks(order: Sequence[str], names: Mapping[str, str],
                  readers: Mapping[str, Iterable[str]],
                  producers: Callable[[str], Iterable[str]],
                  depth: int | None = None) -> dict[str, str]:
    """Each layer's block (node id -> block), ``order`` a topological order of the
    layers, ``readers``/``producers`` their consumers and producers by node id."""
    found: dict[str, str | None] = {node: scope(names[node]) for node in order}
    for node in reversed(order):  # consumers first: a weight joins its reader
        if found[node] is None:
            for reader in readers.get(node, ()):
                if found.get(reader) is not None:
                    found[node] = found[reader]
                    break
    for node in order:  # then a layer nothing reads joins its producer
        if found[node] is None:
            for source in producers(node):
                if found.get(source) is not None:
                    found[node] = found[source]
                    break
    return {node: _cut(block or TOP, depth) for node, block in found.items()}
