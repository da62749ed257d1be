"""The folders draw the architecture: every import inside engine/ goes down, never up.

Layers, bottom to top, as engine/__init__.py describes them; a subpackage may import itself and
what ALLOWED lists for it. The check reads the sources (Python imports, Cython cimports, imports
inside functions too), so it holds for lazily imported modules as well."""
import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "engine"
REPO = ENGINE.parent

ALLOWED = {
    "tools": {"rules", "scoring"},   # match.py scores finished games with CSA* when no referee is given
    "rules": set(),
    "nets": {"rules"},
    "search": {"rules", "nets"},
    "scoring": {"rules", "nets", "search"},
    "play": {"rules", "nets", "search", "scoring"},
    "training": {"rules", "nets", "search", "scoring", "play", "tools"},
    "gtp": {"rules", "nets", "search", "scoring", "play", "tools"},
}
# engine/train.py and engine/match.py: `python -m engine.train` / `engine.match`, kept as entry points
TOP_LEVEL_ENTRY_POINTS = {"train.py": {"training"}, "match.py": {"tools"}}

IMPORT = re.compile(r"^\s*(?:from\s+engine\.(\w+)[\w.]*\s+c?import|from\s+engine\s+import\s+([\w, ]+)"
                    r"|c?import\s+engine\.(\w+))", re.MULTILINE)


def engine_imports(path):
    """The engine subpackages (or top-level names) a source file imports."""
    found = set()
    for dotted, from_engine, plain in IMPORT.findall(path.read_text()):
        if from_engine:
            found.update(name.strip().split(" as ")[0] for name in from_engine.split(","))
        else:
            found.add(dotted or plain)
    return found - {"__version__"}


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
