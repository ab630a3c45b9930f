"""Every use of the ``openvino`` package: the CPU plugin and its compile settings
(``core``), single-op cases run on it (``cases``), whole models run with their outputs
exposed (``models``), inputs made to exercise a model (``feeding``), the bridge between
``openvino.Model`` and the graph (``interop``), and the child process runtime work runs in
so that a native crash is reported, never the end of ovgather (``worker``). No other
package imports openvino; each function here imports it on first use."""

from .cases import OpCase, OpRun, build_model, known_crash, run_cases
from .core import cpu_config, openvino
from .feeding import Feed, feeds_by_name, input_feeds, make_array
from .interop import ONNX_SUFFIXES, from_openvino, load_model, to_openvino
from .models import ModelRun, OutputShapes, read_model, run_model_with_outputs
from .worker import RuntimeCrash, Worker, Workers, run_split, shared_worker, shared_workers

__all__ = ["OpCase", "OpRun", "openvino", "cpu_config", "build_model", "run_cases",
           "known_crash", "ModelRun", "run_model_with_outputs", "OutputShapes",
           "from_openvino", "to_openvino", "load_model", "ONNX_SUFFIXES", "Feed",
           "input_feeds", "feeds_by_name", "make_array", "read_model", "RuntimeCrash",
           "Worker", "Workers", "run_split", "shared_worker", "shared_workers"]
