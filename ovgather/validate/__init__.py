"""Runtime proof: what ovgather infers, run on the OpenVINO CPU plugin and compared.

``gathers`` runs each gather-family layer alone on random valid indices against the
NumPy reference; ``whole_model`` runs the gathers inside the whole model and
``all_layers`` proves every layer's output shape there. Both whole-model proofs take
their input sizes from ``sizes``, their memory estimate from ``memory`` and their runs
from ``runner``; ``report`` holds the verdicts.
"""

from .all_layers import prove_all_layers
from .gathers import body_gathers, gather_layers, validate
from .memory import DEFAULT_MEMORY_BUDGET, parse_size
from .report import (
    PROOF_STATUSES,
    STATUSES,
    LayerProof,
    LayerValidation,
    ProofReport,
    ValidationReport,
    declared_rows,
    left_out_line,
    problem_rows,
    summary_line,
)
from .sizes import input_sizes
from .whole_model import validate_whole_model

__all__ = ["STATUSES", "LayerValidation", "ValidationReport", "validate",
           "validate_whole_model", "gather_layers", "body_gathers", "DEFAULT_MEMORY_BUDGET",
           "parse_size", "LayerProof", "ProofReport", "prove_all_layers", "input_sizes",
           "PROOF_STATUSES", "summary_line", "problem_rows", "declared_rows", "left_out_line"]
