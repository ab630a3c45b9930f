"""What a model costs: FLOPs and MACs per layer, weights, activation memory, CPU time.

``stats`` puts a cost on every layer ovgather inferred (``walk.py``): its MACs and
FLOPs by the formula of its op type (``flops.py``), the weights it owns and the live
activations while it runs (``memory.py``), its block by name scope (``blocks.py``), added
up by block and op type (``report.py``); ``info`` is the one-screen summary of a model
(``summary.py``); ``stats --profile`` gives each layer and block its CPU time
(``timing.py``, through ``runtime/profiling.py``: nothing else here runs OpenVINO).
Named ``cost`` because ``og.stats`` is the function (docs/architecture.md).
"""

from .._lazy import submodule_exports
from .report import LayerCost, StatsReport
from .walk import stats

__all__ = ["stats", "StatsReport", "LayerCost", "info", "InfoReport"]

__getattr__ = submodule_exports(__name__, {"info": "summary", "InfoReport": "summary"})
