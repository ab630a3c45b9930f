"""The shape walk: graph + op rules + weights -> a report of every layer.

``walk`` re-infers every layer in topological order; ``inputs`` says what reaches a
layer's inputs (the one place that answer is computed); ``bodies`` runs the bodies of
TensorIterator, Loop and If; ``target`` what an older OpenVINO release
cannot load or compile; ``report`` holds the verdicts and their comparison.
"""

from .._lazy import submodule_exports
from .inputs import shape_reaching, shapes_reaching, tensors_reaching
from .report import STATUSES, CheckReport, LayerResult, known_ops, rule_words
from .walk import all_tensors, body_runs, check, infer_shapes, input_tensors

__all__ = ["LayerResult", "CheckReport", "check", "infer_shapes", "input_tensors", "all_tensors",
           "rule_words", "STATUSES", "known_ops", "body_runs", "tensors_reaching",
           "shapes_reaching", "shape_reaching", "TargetProblem", "target_problems",
           "infer_symbols"]

# the release table is read only by a check that asks for a target runtime, the
# symbolic walk only by infer --symbols
__getattr__ = submodule_exports(__name__, {"TargetProblem": "target",
                                           "target_problems": "target",
                                           "infer_symbols": "symbols"})
