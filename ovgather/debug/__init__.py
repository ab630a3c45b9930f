"""Searches that run a model many times: ``reduce`` (from a failing model to the few
layers that still fail, every candidate run in the runtime's worker process).

``cuts.py`` cuts a standalone IR from any set of layers (a Parameter or, for a small shape
tensor, a Const where it cuts, fed what the whole model computed there), ``runs.py`` holds
the runs in the worker (the model's inputs, the tensors at the cuts, a candidate's
outputs), ``conditions.py`` the failures a search keeps (``crashes``, ``differs``,
``nonfinite``, ``invalid``, ``mismatch``, ``validate-fails``, a command), and
``search.py`` the search itself (bisect on the topological order, then linear shrinking);
``half.py`` ``precision`` (where f16 or bf16 breaks a model, and the layers to keep
in f32).
"""

from .conditions import CONDITIONS
from .half import PrecisionReport, precision
from .search import ReduceReport, reduce

__all__ = ["reduce", "ReduceReport", "CONDITIONS", "precision", "PrecisionReport"]
