"""ovgather: OpenVINO IR models as networkx graphs, centred on the gather family.

Read an IR into a ``networkx.MultiDiGraph``, re-infer every layer's output shape and
compare it with the dims the IR declares, rewrite the graph (GatherND-5 ⇄ GatherND-8),
and prove the gather layers against the OpenVINO CPU runtime.

The public names below are loaded on first use (PEP 562), so that ``import ovgather``,
and with it ``ovgather --help``, does not pay for numpy, networkx and lxml before a
command needs them. ``_PUBLIC`` is the explicit table of which module holds each name.
The first use also warns when the compiled IR walk is missing but was installed
(``ir/walkcheck.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import errors as _errors

__version__ = "0.1.0"

#: public name -> the module (relative to this package) that defines it
_PUBLIC: dict[str, str] = {
    # reading, checking and writing
    "read_ir": ".ir", "parse_ir": ".ir", "write_ir": ".ir", "const_value": ".ir",
    "check": ".infer", "infer_shapes": ".infer", "CheckReport": ".infer",
    "infer_symbols": ".infer",
    "target_problems": ".infer", "TargetProblem": ".infer",
    # shape rules
    "gather_nd_shape": ".ops", "gather_elements_shape": ".ops", "gather_shape": ".ops",
    "onnx_gather_nd_shape": ".ops",
    # rewriting
    "convert_gather_nd": ".passes", "ConvertGatherND": ".passes", "Pass": ".passes",
    "PassResult": ".passes", "find_layers": ".edit", "add_layer": ".edit",
    "add_const": ".edit", "insert_after": ".edit", "replace_layer": ".edit",
    "remove_layer": ".edit", "reinfer": ".edit", "connect": ".edit",
    "unique_name": ".edit", "editing": ".edit", "bypass": ".edit",
    "replace_uses": ".edit", "rename_input": ".edit", "rename_output": ".edit",
    "set_const": ".edit", "cleanup": ".edit",
    "reshape": ".passes", "ReshapeResult": ".passes",
    # OpenVINO in memory
    "from_openvino": ".runtime", "to_openvino": ".runtime", "load_model": ".runtime",
    # two models on the runtime
    "compare": ".comparison", "CompareReport": ".comparison",
    "compare_layers": ".comparison", "LayersReport": ".comparison",
    "diff": ".comparison", "DiffReport": ".comparison",
    # searches that run a model many times
    "reduce": ".debug", "ReduceReport": ".debug", "precision": ".debug",
    "PrecisionReport": ".debug",
    # what a model costs
    "stats": ".cost", "StatsReport": ".cost", "info": ".cost", "InfoReport": ".cost",
    # in a notebook (graphs and reports display themselves there once ovgather is imported)
    "view": ".views", "picture": ".views", "Picture": ".views",
    # shapes
    "Dimension": ".shapes", "PartialShape": ".shapes",
    # errors: the whole family (a small module with no imports of its own)
    **dict.fromkeys(_errors.__all__, ".errors"),
}
#: public modules -> where they live (``og.reference``: the gather family's NumPy references)
_MODULES: dict[str, str] = {"errors": ".errors", "graph": ".graph",
                            "reference": ".ops.reference", "shapes": ".shapes"}

__all__ = [*_PUBLIC, *_MODULES]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        from .ir.walkcheck import warn_if_walk_missing

        warn_if_walk_missing()
        value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    elif name in _MODULES:
        value = importlib.import_module(_MODULES[name], __name__)
    else:
        raise AttributeError(f"module 'ovgather' has no attribute '{name}'")
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # what type checkers and editors see
    from . import errors, graph, shapes  # noqa: F401
    from .comparison import (  # noqa: F401
        CompareReport,
        DiffReport,
        LayersReport,
        compare,
        compare_layers,
        diff,
    )
    from .cost import InfoReport, StatsReport, info, stats  # noqa: F401
    from .debug import PrecisionReport, ReduceReport, precision, reduce  # noqa: F401
    from .edit import *  # noqa: F403 (the editing API: edit.__all__)
    from .errors import (  # noqa: F401
        IRError,
        IRStructureError,
        OvgatherError,
        ReshapeError,
        ShapeError,
        ShapeInferenceError,
        ShapeParseError,
        UnsupportedOpError,
        WeightsError,
        XMLSyntaxError,
    )
    from .infer import CheckReport, TargetProblem, check, infer_shapes, target_problems  # noqa: F401
    from .ir import const_value, parse_ir, read_ir, write_ir  # noqa: F401
    from .ops import (  # noqa: F401
        gather_elements_shape,
        gather_nd_shape,
        gather_shape,
        onnx_gather_nd_shape,
        reference,  # noqa: F401
    )
    from .passes import ConvertGatherND, Pass, PassResult, convert_gather_nd  # noqa: F401
    from .passes.reshape import ReshapeResult, reshape  # noqa: F401
    from .runtime.interop import from_openvino, load_model, to_openvino  # noqa: F401
    from .shapes import Dimension, PartialShape  # noqa: F401
    from .views import Picture, picture, view  # noqa: F401


def _in_a_notebook() -> None:
    """Inside an IPython kernel (IPython imported already: never imported here), graphs
    and reports display themselves as HTML (``notebook.register``)."""
    import sys

    if "IPython" in sys.modules:
        from .views.notebook import register

        register()


_in_a_notebook()
