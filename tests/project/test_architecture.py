"""The house rules of the package, read from its source with ``ast``.

Every import counts, also those inside functions (a lazy import is still a dependency):
- no import circle between modules;
- no module takes a ``_private`` name from a module of another package;
- ``openvino`` is imported only inside ``ovgather/runtime/``;
- no module is longer than 700 lines;
- no module sits loose in ``ovgather/`` besides the foundation (``FOUNDATION``), and every
  package's ``__init__`` opens with a docstring saying what the room owns;
- a package imports only packages of a lower layer (``LAYERS``, the table in
  docs/architecture.md): imports run one way, from the foundation up to the CLI.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ovgather"
MAX_LINES = 700

#: The layers of docs/architecture.md, lowest first: a package (or top-level module) may
#: import only from layers below its own.
LAYERS = (
    {"errors"},
    {"shapes", "element_types", "atomic", "_lazy"},
    {"ops"},
    {"graph"},
    {"ir"},
    {"infer", "runtime"},
    {"edit"},
    {"passes"},
    {"validate"},
    {"comparison"},
    {"debug", "cost"},
    {"views"},
    {"ovgather"},  # the package's __init__: the public surface, loaded lazily
    {"cli"},
    {"__main__"},
)

#: the only modules that sit directly in ovgather/: the foundation, which imports nothing
#: of ours, and the package's own entry points; everything else lives in a room (a package)
FOUNDATION = frozenset({"errors", "shapes", "element_types", "atomic", "_lazy"})
ENTRY_POINTS = frozenset({"__init__", "__main__"})


@dataclass(frozen=True)
class Import:
    """``importer`` imports ``names`` of ``module`` (a module, or a package's __init__)."""

    importer: str
    module: str
    names: tuple[str, ...]
    line: int


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def sources(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def imports_of(path: Path, module: str, known: set[str], root: Path = PACKAGE) -> list[Import]:
    """Every import in the file, resolved to absolute module names; ``from pkg import mod``
    counts as an import of ``pkg.mod`` when that is a module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = package_of(module, path.name == "__init__.py")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(module, a.name, (), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            plain = []
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    found.append(Import(module, sub, (), node.lineno))
                else:
                    plain.append(alias.name)
            if plain:
                found.append(Import(module, target, tuple(plain), node.lineno))
    return found


def import_graph(root: Path = PACKAGE) -> tuple[nx.DiGraph, list[Import]]:
    mods = sources(root)
    # a compiled module (the Cython IR walk) is a module too, with no imports of ours
    known = set(mods) | {module_name(p, root) for p in root.rglob("*.pyx")}
    graph, every = nx.DiGraph(), []
    graph.add_nodes_from(known)
    for module, path in mods.items():
        for imp in imports_of(path, module, known, root):
            every.append(imp)
            if imp.module in known and imp.module != module:
                graph.add_edge(module, imp.module, line=imp.line)
    return graph, every


def circles(graph: nx.DiGraph) -> list[list[str]]:
    """One cycle per strongly connected part of more than one module."""
    out = []
    for part in nx.strongly_connected_components(graph):
        if len(part) > 1:
            out.append(nx.find_cycle(graph.subgraph(part))[0:])
    return out


def private_takes(every: list[Import], mods: dict[str, Path]) -> list[str]:
    """``_name`` taken from a module whose package is not the importer's."""
    bad = []
    for imp in every:
        if imp.module not in mods:
            continue
        importer_pkg = package_of(imp.importer, mods[imp.importer].name == "__init__.py")
        target_pkg = package_of(imp.module, mods[imp.module].name == "__init__.py")
        taken = [n for n in imp.names if n.startswith("_") and not n.startswith("__")]
        if taken and importer_pkg != target_pkg:
            bad.append(f"{imp.importer}:{imp.line} takes {', '.join(taken)} from {imp.module}")
    return bad


def openvino_outside_runtime(every: list[Import]) -> list[str]:
    return [f"{imp.importer}:{imp.line}" for imp in every
            if imp.module.split(".")[0] == "openvino"
            and not imp.importer.startswith("ovgather.runtime")]


def part_of(module: str, root: Path = PACKAGE) -> str:
    """The package (``ir``) or top-level module (``shapes``) a module belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return parts[0]
    return parts[1]


def upward_imports(graph: nx.DiGraph, layers=LAYERS) -> list[str]:
    """Imports from a package into one of the same or a higher layer."""
    level = {name: i for i, names in enumerate(layers) for name in names}
    bad = []
    for u, v, data in graph.edges(data=True):
        a, b = part_of(u), part_of(v)
        if a == b:
            continue
        if a not in level or b not in level:
            bad.append(f"{u} -> {v}: {a if a not in level else b} is in no layer")
        elif level[b] >= level[a]:
            bad.append(f"{u}:{data['line']} imports {v}, which is not in a lower layer")
    return bad


def loose_modules(root: Path = PACKAGE) -> list[str]:
    """Modules directly in the package that are neither the foundation nor an entry point."""
    return sorted(p.name for p in root.iterdir()
                  if p.suffix in (".py", ".pyx") and p.stem not in FOUNDATION | ENTRY_POINTS)


def rooms_without_a_docstring(root: Path = PACKAGE) -> list[str]:
    """Packages whose ``__init__`` does not say, in a docstring of at least two lines, what
    the room owns."""
    bad = []
    for init in sorted(root.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        if len([line for line in doc.splitlines() if line.strip()]) < 2:
            bad.append(str(init.parent.relative_to(root.parent)))
    return bad


def long_modules(mods: dict[str, Path]) -> list[str]:
    return [f"{m}: {n} lines" for m, p in mods.items()
            if (n := len(p.read_text().splitlines())) > MAX_LINES]


GRAPH, EVERY = import_graph()
MODULES = sources()


def test_the_walk_sees_the_whole_package():
    assert {"ovgather.ir.reader", "ovgather.infer.walk", "ovgather.cli"} <= set(MODULES)
    assert GRAPH.number_of_edges() > 100  # lazy imports inside functions included


def test_no_import_circle():
    assert circles(GRAPH) == []


def test_no_private_name_taken_across_packages():
    assert private_takes(EVERY, MODULES) == []


def test_openvino_is_imported_only_in_the_runtime_package():
    assert openvino_outside_runtime(EVERY) == []


def test_imports_run_one_way_from_the_foundation_up_to_the_cli():
    assert upward_imports(GRAPH) == []


def test_no_module_sits_loose_beside_the_packages():
    assert loose_modules() == []


def test_every_room_says_what_it_owns():
    assert rooms_without_a_docstring() == []


def test_the_rooms_of_the_house_are_there():
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert {"graph", "ir", "ops", "infer", "passes", "edit", "runtime", "validate",
            "comparison", "views", "cli"} <= rooms
    layered = {name for names in LAYERS for name in names}
    assert rooms <= layered, f"a package in no layer: {sorted(rooms - layered)}"


def test_no_module_is_longer_than_700_lines():
    assert long_modules(MODULES) == []


# -- the checks catch what they are for: a small package made to break each rule ----------
def _write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "ovgather"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    pkg = _write(tmp_path, {"__init__.py": "", "a.py": "from .b import f\n",
                            "b.py": "def f():\n    from . import a\n"})
    graph, _ = import_graph(pkg)
    assert [set(c) for c in circles(graph)] == [{("ovgather.a", "ovgather.b"),
                                                 ("ovgather.b", "ovgather.a")}]


def test_a_private_name_from_another_package_is_found(tmp_path):
    pkg = _write(tmp_path, {"__init__.py": "", "ir/__init__.py": "", "ir/reader.py": "_x = 1\n",
                            "ir/writer.py": "from .reader import _x\n",
                            "infer/__init__.py": "",
                            "infer/walk.py": "def f():\n    from ..ir.reader import _x\n"})
    graph, every = import_graph(pkg)
    assert private_takes(every, sources(pkg)) == [
        "ovgather.infer.walk:2 takes _x from ovgather.ir.reader"]


def test_openvino_outside_runtime_is_found(tmp_path):
    pkg = _write(tmp_path, {"__init__.py": "", "runtime/__init__.py": "import openvino\n",
                            "show.py": "def f():\n    import openvino as ov\n"})
    _, every = import_graph(pkg)
    assert openvino_outside_runtime(every) == ["ovgather.show:2"]


def test_an_import_into_a_higher_layer_is_found(tmp_path):
    pkg = _write(tmp_path, {"__init__.py": "", "shapes.py": "", "errors.py": "",
                            "ops/__init__.py": "def f():\n    from ..ir import reader\n",
                            "ir/__init__.py": "", "ir/reader.py": "from .. import shapes\n"})
    graph, _ = import_graph(pkg)
    assert upward_imports(graph) == [
        "ovgather.ops:2 imports ovgather.ir.reader, which is not in a lower layer"]


@pytest.mark.parametrize(("lines", "too_long"), [(700, False), (701, True)])
def test_a_long_module_is_found(tmp_path, lines, too_long):
    pkg = _write(tmp_path, {"__init__.py": "", "big.py": "x = 1\n" * lines})
    assert bool(long_modules(sources(pkg))) == too_long


def test_a_loose_module_is_found(tmp_path):
    pkg = _write(tmp_path, {"__init__.py": "", "errors.py": "", "shapes.py": "",
                            "rewrite.py": "", "ir/__init__.py": ""})
    assert loose_modules(pkg) == ["rewrite.py"]


def test_a_room_without_a_docstring_is_found(tmp_path):
    pkg = _write(tmp_path, {"__init__.py": '"""The package.\n\nWhat it is."""\n',
                            "ir/__init__.py": '"""One line only."""\n',
                            "views/__init__.py": '"""Pictures.\nAnd pages."""\n'})
    assert rooms_without_a_docstring(pkg) == ["ovgather/ir"]


def test_no_room_shadows_a_public_name():
    """A subpackage becomes an attribute of ``ovgather`` when first imported, so a room
    named like a public function (``compare``, ``stats``) would replace that function."""
    import ovgather

    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    public_functions = set(ovgather.__all__) - {"errors", "graph", "shapes", "reference"}
    assert rooms & public_functions == set()


def test_a_public_function_survives_the_import_of_every_room():
    import importlib

    import ovgather

    for room in sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()):
        importlib.import_module(f"ovgather.{room}")
    assert callable(ovgather.compare) and callable(ovgather.compare_layers)
    assert callable(ovgather.reshape) and callable(ovgather.check)
