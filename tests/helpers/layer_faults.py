"""Weights perturbed one at a time in a copy of an IR, and the layer that must then differ
first, found from the graph (never written down): the first layer, in OpenVINO's order,
that reads the weight through nothing but its constant decompression chain."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

#: Ops between a weight and its reader that keep every element (the decompression chain)
CHAIN = ("Convert", "Reshape", "Unsqueeze", "Squeeze", "Transpose")
#: Readers whose every output depends on every element of the weight they read
READERS = ("MatMul", "Convolution", "GroupConvolution", "Multiply", "Add")
#: What the first element of a weight is moved by: far past any tolerance
DELTA = 8.0


@dataclass(frozen=True)
class Fault:
    const: str  # the Const layer's friendly name
    reader: str  # the friendly name of the layer that must differ first
    offset: int  # bytes into the .bin
    element_type: str


def constants(G: nx.MultiDiGraph) -> set[str]:
    """The layers only constants feed (Consts included)."""
    out: set[str] = set()
    for n in nx.topological_sort(G):
        preds = list(G.predecessors(n))
        if G.nodes[n]["type"] == "Const" or (preds and all(p in out for p in preds)):
            out.add(n)
    return out


def faults(G: nx.MultiDiGraph) -> list[Fault]:
    """Every float weight of at least 16 elements whose chain reaches exactly one
    non-constant layer, a READER, in the topological order of ``G``."""
    const = constants(G)
    found = []
    for n, a in G.nodes(data=True):
        data = a.get("data") or {}
        if a["type"] != "Const" or data.get("element_type") not in ("f16", "f32"):
            continue
        if int(data.get("size", 0)) < 16 * (2 if data["element_type"] == "f16" else 4):
            continue
        readers, todo, ok = set(), [n], True
        while todo:
            u = todo.pop()
            for v in G.successors(u):
                if v not in const:
                    readers.add(v)
                elif G.nodes[v]["type"] in CHAIN:
                    todo.append(v)
                else:
                    ok = False
        if ok and len(readers) == 1:
            (r,) = readers
            if G.nodes[r]["type"] in READERS:
                found.append(Fault(a["name"], G.nodes[r]["name"], int(data["offset"]),
                                   data["element_type"]))
    return found


def perturbed(xml: Path, fault: Fault, folder: Path) -> Path:
    """A copy of the IR in ``folder`` whose weight ``fault.const`` has its first element
    moved by DELTA."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "model.xml"
    shutil.copyfile(xml, out)
    blob = bytearray(xml.with_suffix(".bin").read_bytes())
    dtype = np.float16 if fault.element_type == "f16" else np.float32
    value = np.frombuffer(bytes(blob[fault.offset:fault.offset + dtype().itemsize]), dtype)
    blob[fault.offset:fault.offset + value.nbytes] = (value + dtype(DELTA)).tobytes()
    out.with_suffix(".bin").write_bytes(bytes(blob))
    return out


def early_middle_late(G: nx.MultiDiGraph, order: list[str]) -> list[Fault]:
    """Three faults whose readers come early, in the middle and late in ``order`` (A's
    layer names in the report's order)."""
    place = {name: k for k, name in enumerate(order)}
    found = sorted((f for f in faults(G) if f.reader in place), key=lambda f: place[f.reader])
    return [found[0], found[len(found) // 2], found[-1]]
