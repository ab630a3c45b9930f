"""What each OpenVINO release's IR reader takes, and what its CPU plugin is known to refuse.

The reader part is ``releases.json`` beside this file, written by ``tools/release_table.py``
from each release installed in its own venv (``read_model`` probes; do not edit it by
hand): per release, the opset runs like ``opsets.json`` (``[first opset, last opset, op
version built]``) and the element types it reads, each with the uses it was seen to take
(``parameter``: a Parameter's ``element_type``, ``const``: a Const's, ``convert``: any
other port or type attribute), and the element types its CPU plugin compiles a model input
of. The other compile-time limits below are not in any table: they were measured by
compiling models on the CPU plugin of each release.

>>> release_of("2023.0.2"), release_of("2024.0")
('2023.0', '2024.0')
>>> builds("2023.0", "Pad", 12), builds("2024.0", "MaxPool", 14), builds("2023.0", "Relu", 1)
(None, 8, 1)
>>> reads_type("2023.0", "f8e4m3", "const"), reads_type("2025.0", "f8e4m3", "const")
(False, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...errors import UsageError

__all__ = ["RELEASES", "NEWEST", "CompileLimit", "COMPILE_LIMITS", "release_of", "builds",
           "reads_type", "compiles_input"]

_DATA = json.loads(Path(__file__).with_name("releases.json").read_text(encoding="utf-8"))

#: release ("2023.0") -> its row of releases.json, oldest first
RELEASES: dict[str, dict] = dict(sorted(_DATA["releases"].items(),
                                        key=lambda kv: tuple(map(int, kv[0].split(".")))))
#: the release the table was made with last: what the installed OpenVINO reads
NEWEST: str = next(reversed(RELEASES))


def release_of(text: str) -> str:
    """The release a version names: ``2023.0.2`` is a patch of ``2023.0`` and reads the
    same IRs; a release the table does not hold is a usage error."""
    parts = text.strip().split(".")
    release = ".".join(parts[:2])
    if len(parts) < 2 or release not in RELEASES or not all(p.isdigit() for p in parts):
        raise UsageError(f"--target-runtime must name an OpenVINO release the table knows "
                         f"({', '.join(RELEASES)}, or a patch such as 2023.0.2), but got "
                         f"{text!r}")
    return release


def builds(release: str, op_type: str, opset: int) -> int | None:
    """The op version ``release``'s reader builds for ``op_type`` in ``opset``, or None
    when it refuses the pair ("unsupported opset", "doesn't contain the operation")."""
    for first, last, version in RELEASES[release]["opsets"].get(op_type, ()):
        if first <= opset <= last:
            return version
    return None


def reads_type(release: str, element_type: str, use: str) -> bool:
    """Whether ``release`` reads ``element_type`` in ``use`` (``parameter``, ``const`` or
    ``convert``). A use the newest release does not take either (a string Const, whose
    probe layout is not a string tensor's) is not held against the older ones."""
    def takes(r: str) -> bool:
        return use in RELEASES[r]["element_types"].get(element_type, ())
    return takes(release) or not takes(NEWEST)


def compiles_input(release: str, element_type: str) -> bool:
    """Whether ``release``'s CPU plugin compiles a model input of ``element_type`` (a
    type the newest release does not compile either is not held against it)."""
    def takes(r: str) -> bool:
        return element_type in RELEASES[r].get("input_types_compiled", ())
    return takes(release) or not takes(NEWEST)


@dataclass(frozen=True)
class CompileLimit:
    """A layer the CPU plugin of ``releases`` refuses to compile (or to run) although the
    reader's table takes its op; ``when`` names the condition ``infer.target`` tests,
    ``message`` what the release said. ``stage`` "read": a refusal of the reader itself
    that the opset table cannot show (it depends on the layer's inputs)."""

    op_type: str
    when: str
    releases: tuple[str, ...]
    message: str
    stage: str = "compile"


COMPILE_LIMITS: tuple[CompileLimit, ...] = (
    # 2023.0.2: Parameter f32 -> IsNaN -> Select compiles to "Eltwise node with name `IsNaN`
    # doesn't support BOOL precision"; IsNaN straight into a Result compiles (the Result
    # takes the mask as u8). The ONNX-frontend transformers of ir_corpus (bert, gpt2, ...)
    # stop there. 2024.0.0 and later compile both.
    CompileLimit("IsNaN", "output feeds a layer other than Result", ("2023.0",),
                 "the CPU plugin's Eltwise IsNaN does not support a BOOL output"),
    # 2024.0.0: ir_corpus/llama_kv/pytorch_stateful.xml fails to compile with "The element
    # type of attention_mask must be either floating-point or boolean": the plugin's
    # stateful-SDPA fusion turns the boolean mask into u8 first. 2025.0.0 compiles it;
    # 2023.0 does not read SDPA at all.
    CompileLimit("ScaledDotProductAttention", "boolean attention_mask in a stateful model",
                 ("2024.0",), "the CPU plugin turns the boolean attention_mask of a stateful "
                 "model into u8, then refuses it"),
    # 2025.0.0 reads Identity-16 but compiles it to "Unsupported operation of type:
    # Identity"; 2026.4 compiles it.
    CompileLimit("Identity", "always", ("2025.0",), "the CPU plugin has no Identity"),
    # 2023.0.2 reads ReadValue-6 only with its initializer input ("index '0' out of range in
    # get_input_element_type"), and runs a state only of static shape: a Parameter [?,2]
    # -> ReadValue(init) -> Add -> Assign model compiles, then fails at its first inference
    # ("Evaluation failed on node of type: ReadValue"); so does the stateful Llama of
    # ir_corpus ("Number shapes mismatch with real outputs number for node … Assign").
    CompileLimit("ReadValue", "no initializer input", ("2023.0",),
                 "the reader takes a ReadValue only with its initializer input", "read"),
    CompileLimit("ReadValue", "dynamic variable shape", ("2023.0",),
                 "the CPU plugin runs a state (ReadValue/Assign) only of static shape"),
)
