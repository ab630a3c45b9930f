"""Reading back the DOT text ``ovgather show`` writes: its nodes and edges."""

from __future__ import annotations

import re

NODE = re.compile(r'^\s*"(?P<id>[nb][^"]+)" \[label="(?P<label>[^"]*)", '
                  r'fillcolor="(?P<fill>[^"]+)"', re.M)
EDGE = re.compile(r'^\s*"n(?P<u>[^"]+)" -> "n(?P<v>[^"]+)" \[label="(?P<label>[^"]*)"\]', re.M)


def dot_nodes(text: str) -> dict[str, tuple[str, str]]:
    """``{layer id: (label, fill)}`` of the layers drawn as nodes (``b…`` for a collapsed
    block, keyed by its DOT id)."""
    out = {}
    for m in NODE.finditer(text):
        key = m["id"][1:] if m["id"].startswith("n") else m["id"]
        out[key] = (m["label"], m["fill"])
    return out


def label_lines(label: str) -> list[str]:
    """The lines of a DOT label (``\\n`` separated)."""
    return label.split("\\n")
