"""Every use of the ``openvino`` package: single-op cases run on the CPU plugin
(``cases``), whole models run with their outputs exposed (``models``), and the bridge
between ``openvino.Model`` and the graph (``interop``). No other package imports
openvino; each function here imports it on first use."""

from .cases import *  # noqa: F403
from .cases import __all__ as _cases_all
from .interop import ONNX_SUFFIXES, from_openvino, load_model, to_openvino
from .models import ModelRun, OutputShapes, run_model_with_outputs

__all__ = [*_cases_all, "ModelRun", "run_model_with_outputs", "OutputShapes",
           "from_openvino", "to_openvino", "load_model", "ONNX_SUFFIXES"]
