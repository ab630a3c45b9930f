"""Layers of an OpenVINO extension, inferred by OpenVINO itself (``check --extension``).

An extension (a shared library, or an installed package such as ``openvino_tokenizers``
that ships one) adds ops OpenVINO reads only once it is loaded: the string ops of every
tokenizer IR an LLM pipeline ships (``StringTensorUnpack``, ``BPETokenize``,
``VocabDecoder``, …, ``version="extension"``). ovgather has no rule for them.
:func:`load_extensions` loads each into the process's ``openvino.Core``;
:func:`extension_shapes` then answers, for a layer ovgather does not know, the output
shapes and element types OpenVINO infers for it: the layer alone in a model (its Const
inputs kept, every other input a Parameter of the shape ovgather inferred for it) read by
OpenVINO with the extensions loaded. The walk consults it for the layers it cannot infer
(``G.graph["op_shapes"]``), so the layers after them are checked as usual.
"""

from __future__ import annotations

import copy
import functools
import importlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import networkx as nx
import numpy as np

from ..element_types import element_type_name, precision_of
from ..errors import RuntimeBridgeError, ShapeError, UsageError
from ..graph import input_edges, new_layer, new_port
from ..ops.core.values import Tensor
from ..shapes import PartialShape
from .core import core, first_line, openvino

__all__ = ["resolve_extension", "load_extensions", "extension_shapes", "OpShapes"]

#: Attributes of an extension package that give its library: a path, or a function
#: returning one (openvino_tokenizers has ``_ext_path``).
_PATH_ATTRS = ("_ext_path", "ext_path", "extension_path", "_extension_path")
_PATH_FUNCS = ("get_extension_path", "get_extension", "extension")
#: What OpenVINO says when it has no op of that type and version (the extension lacks it).
_UNKNOWN = ("Cannot create", "unsupported opset", "doesn't exist", "is not supported")

#: The hook the walk calls: ``(G, layer id, input tensors) -> output tensors or None``.
OpShapes = Callable[[nx.MultiDiGraph, str, list[Tensor]], list[Tensor] | None]


def _is_package_name(spec: str) -> bool:
    """``spec`` can name a package: dotted identifiers (``openvino_tokenizers``, ``a.b``)."""
    return bool(spec) and all(part.isidentifier() for part in spec.split("."))


def resolve_extension(spec: str) -> str:
    """The shared library of ``spec``: a file path as it is, else an installed package
    whose ``_ext_path`` (or a ``get_extension_path()``-style function) names it. Anything
    else (an empty name, ``.``, ``..``, a folder, a FIFO or a device, a name no package
    can have, a package whose import fails) is a UsageError naming it."""
    if not spec.strip():
        raise UsageError("--extension '': an empty name; give the path of an extension "
                         "library or the name of an installed package that ships one")
    alt = os.path.altsep or os.path.sep
    if os.path.exists(spec) and not os.path.isfile(spec):
        what = "a folder" if os.path.isdir(spec) else "not a regular file"
        raise UsageError(f"--extension '{spec}' is {what}, not an extension library file; "
                         "give the library's path (.so, .dll, .dylib) or a package's name")
    if (os.path.sep in spec or alt in spec or spec.endswith((".so", ".dll", ".dylib"))
            or os.path.isfile(spec)):
        if not os.path.isfile(spec):
            raise UsageError(f"--extension: no such library file: {spec}")
        return spec
    if not _is_package_name(spec):
        raise UsageError(f"--extension '{spec}' is neither a library file nor a package "
                         "name; give the library's path or an installed package's name "
                         "(openvino_tokenizers)")
    try:
        module = importlib.import_module(spec)
    except ImportError as err:
        raise UsageError(f"--extension '{spec}' is neither a library file nor an installed "
                         f"package ({err}); install it (openvino_tokenizers: pip install "
                         "openvino-tokenizers) or give the library's path") from err
    except Exception as err:  # noqa: BLE001 - the package's own code failed on import
        raise UsageError(f"--extension: the package '{spec}' fails on import "
                         f"({type(err).__name__}: {first_line(err)})") from err
    for name in _PATH_ATTRS:
        path = getattr(module, name, None)
        if isinstance(path, (str, os.PathLike)) and os.path.isfile(path):
            return os.fspath(path)
    for name in _PATH_FUNCS:
        fn = getattr(module, name, None)
        if callable(fn):
            try:
                path = fn()
            except Exception:  # noqa: BLE001 - a package's helper may need arguments
                continue
            if isinstance(path, (str, os.PathLike)) and os.path.isfile(path):
                return os.fspath(path)
    raise UsageError(f"--extension: the package '{spec}' names no extension library "
                     f"(none of {', '.join(_PATH_ATTRS + _PATH_FUNCS)}); give the "
                     "library's path")


@functools.cache
def _load(path: str) -> None:
    openvino()
    try:
        core().add_extension(path)
    except RuntimeError as err:
        raise RuntimeBridgeError(f"OpenVINO could not load the extension {path}: "
                                 f"{first_line(err)}") from err


def load_extensions(specs: Sequence[str]) -> list[str]:
    """Load each extension (a library path or a package) into the process's Core; the
    library paths, in order. Loading one twice does nothing."""
    paths = [resolve_extension(s) for s in specs]
    for path in paths:
        _load(path)
    return paths


def extension_shapes() -> OpShapes:
    """The walk's hook: the output tensors OpenVINO infers for a layer ovgather has no
    rule for, or None when OpenVINO does not know it either (remembered per layer type,
    attributes and input shapes). A layer OpenVINO knows but rejects raises ShapeError
    with OpenVINO's message: the walk makes it ``invalid``."""
    memo: dict[tuple, list[tuple[str, str]] | None] = {}

    def given(G: nx.MultiDiGraph, node: str, ins: list[Tensor]) -> list[Tensor] | None:
        attrs = G.nodes[node]
        edges = input_edges(G, node)
        key = (attrs["type"], attrs.get("version"), tuple(sorted((attrs.get("data") or {})
                                                                 .items())),
               tuple((str(t.shape), t.etype, u if _is_const(G, u) else None)
                     for t, (u, _, _) in zip(ins, edges, strict=False)),
               len(attrs["outputs"]), id(G.graph.get("weights")))
        if key not in memo:
            memo[key] = _ask(G, node, ins)
        found = memo[key]
        if found is None:
            return None
        return [Tensor(PartialShape.parse(shape), etype) for shape, etype in found]

    return given


def _is_const(G: nx.MultiDiGraph, node: str) -> bool:
    return G.nodes[node]["type"] in ("Const", "Constant")


def one_layer(G: nx.MultiDiGraph, node: str, ins: list[Tensor]) -> nx.MultiDiGraph:
    """``node`` alone: its Const inputs kept (their values may set its shapes), every other
    input a Parameter of the tensor ovgather inferred, a Result on each output."""
    H = nx.MultiDiGraph()
    H.graph.update(G.graph)
    H.graph.pop("op_shapes", None)
    H.graph["xml_path"] = None
    attrs = copy.deepcopy(G.nodes[node])
    H.add_node(node, **attrs)
    ids = (str(i) for i in range(max((int(n) for n in G if str(n).isdigit()), default=0) + 1,
                                 10**12))
    for t, (u, fp, tp) in zip(ins, input_edges(G, node), strict=False):
        if _is_const(G, u):
            if u not in H:
                H.add_node(u, **copy.deepcopy(G.nodes[u]))
            H.add_edge(u, node, key=(fp, tp), from_port=fp, to_port=tp, line=None)
            continue
        pid, etype = next(ids), element_type_name(t.etype) or "f32"
        shape = t.shape
        H.add_node(pid, **new_layer(
            f"input{tp}", "Parameter", "opset1",
            data={"shape": "..." if shape.rank is None else str(shape)[1:-1],
                  "element_type": etype},
            outputs=[new_port(0, precision_of(etype), tuple(shape.to_ir_dims()))]))
        H.add_edge(pid, node, key=(0, tp), from_port=0, to_port=tp, line=None)
    for port in attrs["outputs"]:
        rid = next(ids)
        H.add_node(rid, **new_layer(f"output{port['id']}", "Result", "opset1",
                                    inputs=[new_port(0, port.get("precision"),
                                                     tuple(port["dims"]))]))
        H.add_edge(node, rid, key=(port["id"], 0), from_port=port["id"], to_port=0,
                   line=None)
    return H


def _ask(G: nx.MultiDiGraph, node: str, ins: list[Tensor]) -> list[tuple[str, str]] | None:
    from ..ir import write_ir

    ov = openvino()
    H = one_layer(G, node, ins)
    with tempfile.TemporaryDirectory(prefix="ovgather-ext-") as tmp:
        xml = Path(tmp) / "layer.xml"
        write_ir(H, str(xml))
        weights = xml.with_suffix(".bin")
        data = np.frombuffer(weights.read_bytes(), dtype=np.uint8).copy() \
            if weights.exists() else np.zeros(0, dtype=np.uint8)
        try:
            model = core().read_model(model=xml.read_text(encoding="utf-8"),
                                      weights=ov.Tensor(data))
        except RuntimeError as err:
            text = str(err)
            if any(word in text for word in _UNKNOWN):
                return None
            raise ShapeError(f"OpenVINO with the extension rejects the layer: "
                             f"{first_line(err)}") from err
    name = G.nodes[node]["name"]
    op = next((o for o in model.get_ops() if o.get_friendly_name() == name), None)
    if op is None:
        return None
    return [(str(op.get_output_partial_shape(i)), op.get_output_element_type(i).get_type_name())
            for i in range(op.get_output_size())]
