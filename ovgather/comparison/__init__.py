"""Two models side by side (or a model and ONNX Runtime): the user's input files and
their pairing, every output, every layer output; built on validate's runner and budget.

``inputs`` reads the user's ``.npy``/``.npz`` arrays; ``outputs`` is ``compare`` (both
models run on the same inputs, outputs paired by name and compared); ``layers`` is
``compare --all-layers`` (every layer output that pairs up, the first divergent layer).
The package is ``comparison``, not ``compare``: ``og.compare`` is the function, and a
package of that name would replace it as an attribute of ``ovgather`` when imported.
"""

from .inputs import inputs_from_options, load_inputs, name_pairs
from .layers import LayerComparison, LayersReport, compare_layers, pair_layers
from .outputs import CompareReport, OutputComparison, compare, differences

__all__ = [
    "compare",
    "CompareReport",
    "OutputComparison",
    "differences",
    "load_inputs",
    "inputs_from_options",
    "name_pairs",
    "compare_layers",
    "LayersReport",
    "LayerComparison",
    "pair_layers",
]
