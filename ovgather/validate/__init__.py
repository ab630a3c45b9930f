"""Runtime proof: what ovgather infers, run on the OpenVINO CPU plugin and compared.

``gathers`` runs each gather-family layer alone on random valid indices against the
NumPy reference (and ``--whole-model`` runs them inside the model); ``all_layers``
proves every layer's output shape on the runtime.
"""

from .all_layers import (
    PROOF_STATUSES,
    LayerProof,
    ProofReport,
    declared_rows,
    input_sizes,
    problem_rows,
    prove_all_layers,
    summary_line,
)
from .gathers import *  # noqa: F403
from .gathers import __all__ as _gathers_all

__all__ = [*_gathers_all, "LayerProof", "ProofReport", "prove_all_layers", "input_sizes",
           "PROOF_STATUSES", "summary_line", "problem_rows", "declared_rows"]
