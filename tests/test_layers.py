"""The package's floors, checked on the source (parsed with `ast`, never imported).

Bottom-up: ppml/checks.py, ppml/crypto/, ppml/parallel.py, ppml/mpc/, ppml/runtime/,
ppml/protocols/<family>/, ppml/privacy/, ppml/data/, ppml/experiments/, jobs/, and
hydra_plugins/ (the sweeps' Ray launcher, a thin adapter over ppml/runtime/sweep_tasks.py).

* the low floors (checks, crypto, parallel, mpc) import no ppml module above them, and
  neither does any of them except ppml/parallel.py import Ray;
* only ppml/runtime/ and ppml/parallel.py import or use Ray; only ppml/runtime/cluster.py
  calls ``ray.init``;
* no protocol family imports another, and nothing in ppml/protocols imports ppml.experiments;
* every family folder has the same files (`REQUIRED_FAMILY_FILES`).

Every import counts, wherever it stands (in a function, under ``if TYPE_CHECKING``), and so does
``importlib.import_module("...")`` / ``__import__("...")`` with a literal name.  Each failure
lists every offence as ``path:line: what``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PPML = ROOT / "ppml"
JOBS = ROOT / "jobs"
HYDRA_PLUGINS = ROOT / "hydra_plugins"
PROTOCOLS = PPML / "protocols"

REQUIRED_FAMILY_FILES = ("protocol.py", "reference.py", "config.py")
"""Files every family folder under ppml/protocols must have."""

KNOWN_FAMILIES = {"private_cb", "linucb_ds", "samba"}
"""Families that must exist (more may be added)."""

RAY_FUNCTIONS = ("remote", "get", "wait", "kill", "init")
"""``ray.<name>`` uses that only ppml/runtime/ and ppml/parallel.py may make."""

RAY_PLACES = ("ppml/runtime/", "ppml/parallel.py")
"""Where Ray may be imported and used."""

RAY_INIT_PLACE = "ppml/runtime/cluster.py"
"""The only module that calls ``ray.init``."""

LOW_FLOORS = {
    # floor: (which files, which ppml modules they may import)
    "ppml/checks.py": (lambda rel: rel == "ppml/checks.py", ("ppml.checks",)),
    "ppml/crypto/": (lambda rel: rel.startswith("ppml/crypto/"),
                     ("ppml.crypto", "ppml.checks", "ppml.parallel")),
    "ppml/parallel.py": (lambda rel: rel == "ppml/parallel.py", ("ppml.parallel", "ppml.checks")),
    "ppml/mpc/": (lambda rel: rel.startswith("ppml/mpc/"),
                  ("ppml.mpc", "ppml.crypto", "ppml.checks", "ppml.parallel")),
}
"""The floors below the runtime and the ppml modules each may import (itself included); the
bare package ``ppml`` (its ``__init__`` holds only ``__version__``) is allowed to all."""

ABOVE_LOW_FLOORS = ("ppml.runtime", "ppml.protocols", "ppml.experiments", "ppml.data",
                    "ppml.privacy")
"""Floors above the low ones, named in failure messages."""


@dataclass(frozen=True)
class Import:
    module: str          # dotted name of what is imported (resolved if relative)
    line: int
    text: str            # the statement as written, for messages


@dataclass(frozen=True)
class Source:
    rel: str             # path from the repository root, with "/"
    module: str          # dotted module name
    tree: ast.Module
    text: str

    def where(self, node_or_line) -> str:
        line = node_or_line if isinstance(node_or_line, int) else node_or_line.lineno
        return f"{self.rel}:{line}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def sources() -> tuple[Source, ...]:
    """Every module of ppml/, jobs/ and hydra_plugins/, parsed."""
    found = []
    for top in (PPML, JOBS, HYDRA_PLUGINS):
        for path in sorted(top.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            found.append(Source(path.relative_to(ROOT).as_posix(), _module_name(path),
                                ast.parse(text, filename=str(path)), text))
    return tuple(found)


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of this repository."""
    path = ROOT.joinpath(*dotted.split("."))
    # a folder of modules counts with or without __init__.py
    return path.with_suffix(".py").is_file() or (path.is_dir() and any(path.glob("*.py")))


def _package_of(source: Source) -> str:
    if source.rel.endswith("/__init__.py"):
        return source.module
    return source.module.rpartition(".")[0]


def imports(source: Source) -> list[Import]:
    """What ``source`` imports: ``import a.b`` gives a.b; ``from a.b import c`` gives a.b.c
    when that is a module of this repository (``from ppml import runtime``), else a.b;
    relative imports resolved; literal ``importlib.import_module``/``__import__`` names."""
    found = []
    lines = source.text.splitlines()

    def text_of(node):
        return lines[node.lineno - 1].strip()

    for node in ast.walk(source.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Call)):
            text = text_of(node)
        if isinstance(node, ast.Import):
            found += [Import(alias.name, node.lineno, text) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(source).split(".")
                package = package[:len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(Import(sub if alias.name != "*" and _is_module(sub) else base,
                                    node.lineno, text))
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and _dotted(node.func) in ("importlib.import_module", "import_module",
                                         "__import__")):
            found.append(Import(node.args[0].value, node.lineno, text))
    return found


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _ray_aliases(source: Source) -> dict[str, str]:
    """Local names bound to Ray or its members: ``import ray as r`` -> {r: ray},
    ``from ray import init`` -> {init: ray.init}."""
    aliases = {}
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _under(alias.name, "ray"):
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        aliases["ray"] = "ray"
        elif (isinstance(node, ast.ImportFrom) and not node.level
              and _under(node.module or "", "ray")):
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def ray_uses(source: Source) -> list[tuple[int, str]]:
    """``ray.<f>`` for f in `RAY_FUNCTIONS`, through any alias (``ray.remote`` as a decorator,
    ``ray.get(...)``...), as (line, resolved name).  An unimported bare ``ray`` counts too."""
    aliases = {"ray": "ray", **_ray_aliases(source)}
    wanted = {f"ray.{name}" for name in RAY_FUNCTIONS}
    found = []
    for node in ast.walk(source.tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            dotted = _dotted(node)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            if head not in aliases:
                continue
            resolved = aliases[head] + (f".{rest}" if rest else "")
            if resolved in wanted:
                found.append((node.lineno, resolved))
    return sorted(set(found))


def ray_init_calls(source: Source) -> list[int]:
    aliases = {"ray": "ray", **_ray_aliases(source)}
    lines = []
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Call):
            dotted = _dotted(node.func)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            if head in aliases and aliases[head] + (f".{rest}" if rest else "") == "ray.init":
                lines.append(node.lineno)
    return sorted(lines)


def _report(offences: list[str], rule: str) -> str:
    return f"{rule}: {len(offences)} offence(s)\n  " + "\n  ".join(offences)


def _in_ray_places(rel: str) -> bool:
    return any(rel == place or (place.endswith("/") and rel.startswith(place))
               for place in RAY_PLACES)


def families() -> list[str]:
    return sorted(p.name for p in PROTOCOLS.iterdir()
                  if p.is_dir() and p.name != "__pycache__" and not p.name.startswith("."))


# --- the reader itself ---------------------------------------------------------------------------

def test_the_reader_sees_the_tree():
    """Guards against a vacuous pass: the files, imports and Ray uses the rules read are there."""
    rels = {s.rel for s in sources()}
    assert {"ppml/checks.py", "ppml/parallel.py", RAY_INIT_PLACE, "jobs/run.py"} <= rels
    assert any(s.rel.startswith("ppml/crypto/") for s in sources())
    assert any(s.rel.startswith("ppml/mpc/") for s in sources())
    by_rel = {s.rel: s for s in sources()}
    assert "ray" in {i.module for i in imports(by_rel["ppml/parallel.py"])}
    assert "ppml.checks" in {i.module for i in imports(by_rel["ppml/parallel.py"])}
    assert ray_init_calls(by_rel[RAY_INIT_PLACE])
    assert ray_uses(by_rel["ppml/runtime/ray_roles.py"])


def test_the_reader_resolves_imports_and_aliases():
    code = ("import ray as r\nfrom ray import get as fetch\nfrom ppml import runtime\n"
            "from . import ring\nfrom ..crypto import fixed\n"
            "def f():\n    import importlib\n    importlib.import_module('ppml.data')\n"
            "    r.init()\n    fetch(1)\n    @r.remote\n    def g(): pass\n")
    source = Source("ppml/mpc/x.py", "ppml.mpc.x", ast.parse(code), code)
    modules = {i.module for i in imports(source)}
    assert modules == {"ray", "ppml.runtime", "ppml.mpc.ring", "ppml.crypto.fixed",
                       "importlib", "ppml.data"}
    assert ray_init_calls(source) == [9]
    assert {name for _, name in ray_uses(source)} == {"ray.init", "ray.get", "ray.remote"}


# --- the rules -----------------------------------------------------------------------------------

@pytest.mark.parametrize("floor", sorted(LOW_FLOORS))
def test_low_floors_import_nothing_above_them_and_no_ray(floor):
    """checks, crypto, parallel and mpc import only the ppml modules below them (and crypto,
    mpc and checks no Ray at all; ppml/parallel.py is the one low module that may)."""
    selects, allowed = LOW_FLOORS[floor]
    members = [s for s in sources() if selects(s.rel)]
    assert members, f"no module found for floor {floor}"
    offences = []
    for source in members:
        for imp in imports(source):
            if _under(imp.module, "ray") and floor != "ppml/parallel.py":
                offences.append(f"{source.where(imp.line)}: imports Ray ({imp.text})")
            elif _under(imp.module, "ppml") and imp.module != "ppml" and not any(
                    _under(imp.module, ok) for ok in allowed):
                above = [p for p in ABOVE_LOW_FLOORS if _under(imp.module, p)]
                what = f"a floor above it ({above[0]})" if above else "a module it may not"
                offences.append(f"{source.where(imp.line)}: imports {what}: {imp.module} "
                                f"({imp.text}); {floor} may import only {', '.join(allowed)}")
    assert not offences, _report(offences, f"{floor} layering")


def test_only_the_runtime_and_parallel_import_ray():
    offences = [f"{s.where(imp.line)}: imports Ray ({imp.text})"
                for s in sources() if not _in_ray_places(s.rel)
                for imp in imports(s) if _under(imp.module, "ray")]
    assert not offences, _report(offences, f"Ray imported outside {', '.join(RAY_PLACES)}")


def test_only_the_runtime_and_parallel_use_ray():
    offences = [f"{s.where(line)}: uses {name}"
                for s in sources() if not _in_ray_places(s.rel)
                for line, name in ray_uses(s)]
    assert not offences, _report(offences, f"Ray used outside {', '.join(RAY_PLACES)}")


def test_only_cluster_calls_ray_init():
    offences = [f"{s.where(line)}: calls ray.init(...)"
                for s in sources() if s.rel != RAY_INIT_PLACE
                for line in ray_init_calls(s)]
    assert not offences, _report(offences, f"ray.init called outside {RAY_INIT_PLACE}")


def test_families_are_there():
    assert KNOWN_FAMILIES <= set(families()), f"families found: {families()}"


def test_no_family_imports_another():
    offences = []
    names = families()
    for source in sources():
        rel = source.rel
        if not rel.startswith("ppml/protocols/"):
            continue
        own = rel.split("/")[2] if rel.count("/") >= 3 else None   # None: ppml/protocols/*.py
        for imp in imports(source):
            other = [f for f in names if f != own and _under(imp.module, f"ppml.protocols.{f}")]
            if other and own is not None:
                offences.append(f"{source.where(imp.line)}: family {own} imports family "
                                f"{other[0]}: {imp.module} ({imp.text})")
    assert not offences, _report(offences, "protocol families import each other")


def test_protocols_do_not_import_experiments():
    offences = [f"{s.where(imp.line)}: imports {imp.module} ({imp.text})"
                for s in sources() if s.rel.startswith("ppml/protocols/")
                for imp in imports(s) if _under(imp.module, "ppml.experiments")]
    assert not offences, _report(offences, "ppml/protocols imports ppml.experiments")


@pytest.mark.parametrize("family", sorted(KNOWN_FAMILIES))
def test_known_family_has_the_required_files(family):
    missing = [name for name in REQUIRED_FAMILY_FILES if not (PROTOCOLS / family / name).is_file()]
    assert not missing, f"ppml/protocols/{family}/ lacks {', '.join(missing)}"


def test_every_family_has_the_required_files():
    missing = [f"ppml/protocols/{family}/{name}" for family in families()
               for name in REQUIRED_FAMILY_FILES if not (PROTOCOLS / family / name).is_file()]
    assert not missing, "family files missing: " + ", ".join(missing)
