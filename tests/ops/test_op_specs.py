"""One op, one spec: every part of ovgather asks the op's spec, none re-derives a rule.

The gather family's knowledge lives in ``ovgather/ops/``; ``explain`` prints the trace of
the very rule ``check`` runs; a node's ``version`` text is looked up when needed, never
stamped; a bad attribute is reported the same way wherever the rule runs.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from ov_oracle import INDEX_TYPES, ov_gather_nd, random_shape, rng_for

from ovgather.errors import ShapeInferenceError
from ovgather.infer import check
from ovgather.ir import read_ir
from ovgather.ops.core import registry
from ovgather.views.explain import explain_gather_nd, explain_layer

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ovgather"
SAMPLES = ROOT / "ir_samples"

#: Modules that may name a gather op type: the conversion pass is about GatherND by
#: nature, the decompositions for older releases build a Gather of a shape (as OpenVINO's
#: own do), and the CLI's help text names the ops a user can give.
ALLOWED = {"passes/convert_gather_nd.py", "passes/decompose.py", "passes/reshape_rows.py"}


def _gather_strings(path: Path) -> list[tuple[int, str]]:
    names = set(registry.family("gather"))
    tree = ast.parse(path.read_text(), str(path))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names]


def test_the_gather_family_is_known_to_the_registry():
    assert set(registry.family("gather")) == {"GatherND", "GatherElements", "Gather"}


def test_no_module_outside_ops_names_a_gather_op_type():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("ops/") or rel in ALLOWED or rel.startswith("cli/"):
            continue
        found = _gather_strings(path)
        if found:
            offenders[rel] = found
    assert offenders == {}


def test_the_cli_names_gather_ops_only_in_help_text():
    for path in sorted((PACKAGE / "cli").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        names = set(registry.family("gather"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):  # a decision on an op type, not help text
                for c in ast.walk(node):
                    assert not (isinstance(c, ast.Constant) and c.value in names), (path, c.lineno)


def test_the_ast_check_catches_a_module_that_names_one(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('def f(t):\n    return t == "GatherND"\n')
    assert _gather_strings(bad) == [(2, "GatherND")]


def test_nf4_indices_are_accepted_by_check_and_explain_alike():
    """OpenVINO 2026.4.1 counts nf4 as an integral type; the old explain refused it."""
    e = explain_gather_nd("[2,3]", "[2,1]", 0, "nf4")
    assert e.failed_rule is None and e.outputs["GatherND-8"] == "[2,3]"
    assert ov_gather_nd("[2,3]", "[2,1]", 0, 8, "nf4") == "[2,3]"
    spec = registry.find("GatherND", "opset8")
    from ovgather.ops.core.values import Tensor
    from ovgather.shapes import PartialShape

    out = spec.infer([Tensor(PartialShape.parse("[2,3]"), "f32"),
                      Tensor(PartialShape.parse("[2,1]"), "nf4")], {"batch_dims": "0"})
    assert str(out[0].shape) == "[2,3]"


def _sample_gathers():
    out = []
    for path in sorted(SAMPLES.rglob("*.xml")):
        G = read_ir(path)
        out += [(path, n) for n in G if G.nodes[n]["type"] in registry.family("gather")]
    return out


GATHERS = _sample_gathers()


@pytest.mark.parametrize("path,node", GATHERS,
                         ids=[f"{p.relative_to(SAMPLES)}:{n}" for p, n in GATHERS])
def test_explain_and_check_agree_on_every_sample_gather(path, node):
    G = read_ir(path)
    row = {lr.id: lr for lr in check(G).layers}[node]
    e = explain_layer(G, node)
    mine = f"{e.layer['type']}-{e.layer['op_version']}"
    if row.status == "invalid":
        assert e.failed_rule is not None and e.failed_rule in row.message
    else:
        assert e.failed_rule is None and [e.outputs[mine]] == row.inferred


def test_explain_and_the_rule_agree_on_seeded_differential_cases():
    rng = rng_for("spec_trace")
    from ovgather.ops import gather_nd_shape

    failed = 0
    for _ in range(300):
        data = random_shape(rng)
        like = data.strip("[]").split(",") if data not in ("[...]", "[]") else None
        indices = random_shape(rng, like=like)
        b = rng.choice((0, 1, 2, 3))
        itype = rng.choice(INDEX_TYPES) if rng.random() < 0.2 else "i64"
        e = explain_gather_nd(data, indices, b, itype)
        for version in (5, 8):
            try:
                want = str(gather_nd_shape(data, indices, b, version, itype))
            except ShapeInferenceError as err:
                assert e.outputs[f"GatherND-{version}"] is None
                assert e.failed_rule and e.failed_rule in err.message
                failed += 1
                continue
            assert e.outputs[f"GatherND-{version}"] == want
    assert 20 < failed < 550


def test_changing_a_nodes_version_changes_the_next_check():
    G = read_ir(SAMPLES / "gather_nd8_bd2.xml")
    node = next(n for n in G if G.nodes[n]["type"] in registry.family("gather"))
    assert {lr.id: lr.status for lr in check(G).layers}[node] == "ok"
    G.nodes[node]["version"] = "opset5"  # the same layer, now folding its 2 batch dims
    row = {lr.id: lr for lr in check(G).layers}[node]
    assert row.status == "mismatch" and row.inferred == ["[60,3,35]"]
    G.nodes[node]["version"] = "opset4"  # an opset without GatherND
    row = {lr.id: lr for lr in check(G).layers}[node]
    assert row.status == "unknown" and "opset4 has no GatherND" in row.message


def test_a_bad_attribute_is_one_error_wherever_the_rule_runs():
    from ovgather.passes import convert_gather_nd

    G = read_ir(SAMPLES / "gather_nd8_bd2.xml")
    node = next(n for n in G if G.nodes[n]["type"] in registry.family("gather"))
    G.nodes[node]["data"]["batch_dims"] = "x"
    said = "the attribute 'batch_dims' must be an integer, but got 'x'"
    row = {lr.id: lr for lr in check(G).layers}[node]
    assert row.status == "invalid" and row.message == said
    assert explain_layer(G, node).failed_rule == said
    with pytest.raises(ShapeInferenceError) as info:
        convert_gather_nd(G, to="opset5")
    assert info.value.message == said and info.value.layer_id == node


def test_the_references_raise_ovgather_errors():
    import numpy as np

    from ovgather import reference
    from ovgather.errors import IndexRangeError, OvgatherError, ReferenceInputError

    with pytest.raises(IndexRangeError):
        reference.gather_nd(np.zeros((2, 2)), np.array([[5]]))
    with pytest.raises(ReferenceInputError):
        reference.gather_elements(np.zeros((2, 2)), np.zeros((2,), np.int64))
    with pytest.raises(OvgatherError):
        reference.gather(np.zeros((2, 2)), np.array([0]), axis=7)


def test_the_op_index_lists_every_op_file_and_the_types_it_holds():
    """The registry imports an op file only when a model needs one of its types, so it
    finds the file through ``OP_MODULES``: a type missing there would silently be
    ``unchecked``. Every file with ``SPECS`` must be listed with exactly its types."""
    import importlib

    from ovgather.ops import OP_MODULES

    found = {}
    for path in sorted((PACKAGE / "ops").glob("*.py")):
        module = importlib.import_module(f"ovgather.ops.{path.stem}")
        if hasattr(module, "SPECS"):
            found[path.stem] = tuple(dict.fromkeys(s.type for s in module.SPECS))
    assert {k: set(v) for k, v in OP_MODULES.items()} == {k: set(v) for k, v in found.items()}


def test_a_check_imports_only_the_op_files_its_model_needs():
    """The point of the index: checking a few gathers must not import 48 op files (nor
    numpy or networkx, which cost more than the check)."""
    code = ("import sys; from ovgather.ir import read_layer_graph; "
            "from ovgather.infer import check; "
            f"check(read_layer_graph({str(SAMPLES / 'gather_nd8_bd2.xml')!r})); "
            "print(sorted(m for m in sys.modules if m.startswith('ovgather.ops.'))); "
            "print([m for m in ('numpy._core', 'networkx.classes') if m in sys.modules])")
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    from ovgather.ops import OP_MODULES

    files = {m.rsplit(".", 1)[1] for m in eval(out[0])} & set(OP_MODULES)
    assert files == {"gather_nd", "elementwise"}, files
    assert out[1] == "[]"


#: What an op file may import of ovgather: the infrastructure and the foundation.
OP_FILE_IMPORTS = ("ovgather.ops.core", "ovgather.errors", "ovgather.shapes",
                   "ovgather.element_types", "ovgather._lazy")


def _ovgather_imports(path: Path) -> list[tuple[int, str]]:
    """The ovgather modules ``path`` imports (relative imports made absolute, a name taken
    from a package counted as that package's module when it is one), at any depth."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("ovgather")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            if base.startswith("ovgather"):
                found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def test_op_files_import_only_the_core_and_the_foundation():
    """An op file never borrows from another: loading Eye must not load Convolution.
    (``ops/reference.py`` is no op file: it gathers the gather family's references.)"""
    from ovgather.ops import OP_MODULES

    bad = [(path.name, line, name)
           for path in sorted((PACKAGE / "ops").glob("*.py")) if path.stem in OP_MODULES
           for line, name in _ovgather_imports(path)
           if not name.startswith(OP_FILE_IMPORTS)]
    assert not bad, bad


def test_the_core_imports_no_op_file():
    from ovgather.ops import OP_MODULES

    bad = [(path.name, line, name)
           for path in sorted((PACKAGE / "ops" / "core").glob("*.py"))
           for line, name in _ovgather_imports(path)
           if name.startswith("ovgather.ops.") and name.split(".")[2] in OP_MODULES]
    assert not bad, bad
