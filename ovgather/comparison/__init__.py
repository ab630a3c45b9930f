"""Two models side by side (or a model and ONNX Runtime): the user's input files and
their pairing, every output, every layer output; built on validate's runner and budget;
and ``diff``, what changed between two IRs without running them.

``inputs`` reads the user's ``.npy``/``.npz`` arrays; ``outputs`` is ``compare`` (both
models run on the same inputs, outputs paired by name and compared); ``layers`` is
``compare --all-layers`` (every layer output that pairs up, the first divergent layer);
``diff_report`` holds ``diff``, which reads two IRs and says what changed, layer by layer
(``diff_match`` pairs the layers, ``diff_values`` reads rt_info and weights). There is no
module ``diff``: imported, it would replace the function as ``comparison.diff``. Each name
is imported from its module on first use, so ``ovgather diff`` pays for none of the
runtime side's imports.
The package is ``comparison``, not ``compare``: ``og.compare`` is the function, and a
package of that name would replace it as an attribute of ``ovgather`` when imported.
"""

from .._lazy import submodule_exports

_WHERE = {"compare": "outputs", "CompareReport": "outputs", "OutputComparison": "outputs",
          "differences": "outputs", "load_inputs": "inputs", "inputs_from_options": "inputs",
          "name_pairs": "inputs", "compare_layers": "layers", "LayersReport": "layers",
          "LayerComparison": "layers", "pair_layers": "layers", "diff": "diff_report",
          "DiffReport": "diff_report"}

__all__ = list(_WHERE)

__getattr__ = submodule_exports(__name__, _WHERE)
