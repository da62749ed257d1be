"""The folders draw the architecture: every import inside engine/ goes down, never up.

Layers, bottom to top, as engine/__init__.py describes them; a subpackage may import itself and
what ALLOWED lists for it. The check reads the sources (Python imports, Cython cimports, imports
inside functions too), so it holds for lazily imported modules as well. Inside a subpackage the
imports go one way too: its modules import each other without a cycle."""
import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "engine"
REPO = ENGINE.parent

ALLOWED = {
    "tools": {"rules", "scoring"},   # match.py scores finished games with CSA* when no referee is given
    "rules": set(),
    "tactics": {"rules"},
    "nets": {"rules", "tactics"},
    "search": {"rules", "tactics"},  # not nets: the playouts read ladders with engine/tactics
    "scoring": {"rules", "tactics", "nets", "search"},
    "play": {"rules", "tactics", "nets", "search", "scoring"},
    "training": {"rules", "tactics", "nets", "search", "scoring", "play", "tools"},
    "gtp": {"rules", "tactics", "nets", "search", "scoring", "play", "tools"},
}
# engine/train.py and engine/match.py: `python -m engine.train` / `engine.match`, kept as entry points
TOP_LEVEL_ENTRY_POINTS = {"train.py": {"training"}, "match.py": {"tools"}}

IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+engine\.([\w.]+)[ \t]+c?import[ \t]+"
                    r"(\([^)]*\)|[\w, \t]+)"                      # the names, maybe in brackets
                    r"|from[ \t]+engine[ \t]+c?import[ \t]+([\w, \t]+)"
                    r"|c?import[ \t]+engine\.([\w.]+))", re.MULTILINE)


def imported_modules(path):
    """The engine modules a source file imports, dotted below engine: "rules.board" for
    `from engine.rules.board cimport Board` or `from engine.rules import board`, "train" for
    `from engine import train` (a name imported from a subpackage may be a module of it)."""
    found = set()
    for dotted, names, from_engine, plain in IMPORT.findall(path.read_text()):
        if from_engine:
            found.update(name.split()[0] for name in from_engine.split(",") if name.strip())
        elif plain:
            found.add(".".join(plain.split(".")[:2]))
        elif "." in dotted:
            found.add(".".join(dotted.split(".")[:2]))
        else:
            found.update(f"{dotted}.{name.split()[0]}" for name in names.strip("()").split(",")
                         if name.strip())
    return found


def engine_imports(path):
    """The engine subpackages (or top-level names) a source file imports."""
    return {name.split(".")[0] for name in imported_modules(path)} - {"__version__"}


def module_graph(folder):
    """The imports among the modules of one subpackage: {module: modules of it that it imports}.
    A .pyx and its .pxd are one module; __init__.py is left out."""
    modules = {path.stem for path in sources(folder)} - {"__init__"}
    graph = {module: set() for module in modules}
    for path in sources(folder):
        if path.stem in graph:
            graph[path.stem] |= {name.split(".")[1] for name in imported_modules(path)
                                 if name.startswith(folder.name + ".")} & modules
            graph[path.stem].discard(path.stem)
    return graph


def find_cycle(graph):
    """One cycle of graph as [a, b, ..., a], or None when it has none."""
    state = {}          # a module being visited: "open"; visited with all it imports: "done"

    def visit(module, path):
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state:
                cycle = visit(imported, path)
                if cycle:
                    return cycle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module, [])
            if cycle:
                return cycle
    return None


def sources(folder):
    return sorted(p for ext in ("*.py", "*.pyx", "*.pxd") for p in folder.glob(ext))


def test_every_subpackage_is_known_and_documented():
    packages = {p.name for p in ENGINE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(ALLOWED)
    for name in packages:
        assert (ENGINE / name / "__init__.py").read_text().strip().startswith('"""'), name


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_go_down(package):
    for path in sources(ENGINE / package):
        upward = engine_imports(path) - ALLOWED[package] - {package}
        assert not upward, f"{path.relative_to(REPO)} imports {sorted(upward)} from above its layer"


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_import_cycle_inside_a_package(package):
    cycle = find_cycle(module_graph(ENGINE / package))
    assert cycle is None, f"engine/{package}/ has an import cycle: {' -> '.join(cycle)}"


def test_top_level_modules_are_only_the_entry_points():
    modules = {p.name for p in sources(ENGINE)} - {"__init__.py"}
    assert modules == set(TOP_LEVEL_ENTRY_POINTS)
    for name, allowed in TOP_LEVEL_ENTRY_POINTS.items():
        assert engine_imports(ENGINE / name) <= allowed, name


def test_only_entry_points_import_the_gtp_front_end():
    importers = {path.relative_to(REPO).as_posix()
                 for path in [REPO / "gtp_server.py", *ENGINE.rglob("*.py"), *ENGINE.rglob("*.pyx")]
                 if "gtp" in engine_imports(path) and path.parent != ENGINE / "gtp"}
    assert importers == {"gtp_server.py"}


def test_the_checker_sees_each_kind_of_import(tmp_path):
    source = tmp_path / "sample.pyx"
    source.write_text("from engine.rules.board cimport Board\n"
                      "    from engine.nets import weights as weight_files\n"
                      "from engine import __version__, train\n"
                      "import engine.gtp.server\n")
    assert engine_imports(source) == {"rules", "nets", "train", "gtp"}


def test_the_checker_sees_a_cycle_inside_a_package(tmp_path):
    package = tmp_path / "sample"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package."""\nfrom engine.sample import first\n')
    (package / "first.py").write_text("from engine.sample.second import helper\n"
                                      "from engine.rules import board\n")
    (package / "second.pxd").write_text("from engine.sample.second cimport Thing\n")
    (package / "second.pyx").write_text("def helper():\n"
                                        "    from engine.sample import (third,\n"
                                        "                               other as renamed)\n")
    (package / "third.py").write_text("import engine.sample.fourth\n")
    (package / "fourth.py").write_text("def late():\n    from engine.sample import first\n")
    graph = module_graph(package)
    assert graph == {"first": {"second"}, "second": {"third"}, "third": {"fourth"},
                     "fourth": {"first"}}
    assert find_cycle(graph) == ["first", "second", "third", "fourth", "first"]
    (package / "fourth.py").write_text("def late():\n    from engine.sample import not_a_module\n")
    assert find_cycle(module_graph(package)) is None
