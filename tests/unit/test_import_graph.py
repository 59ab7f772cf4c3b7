"""The code's modules import one another without a circle: every `import` and `from ... import` under
functions/migrator, infra/sim and cli/migrator_cli, at module level, inside functions and under TYPE_CHECKING,
read from the source, and no strongly connected component of more than one module among them (a lower-level
module never imports a higher-level one; a type a lower one needs of a higher one is a Protocol of its own)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ROOT / "functions"
# (the folder the package's dotted names start from, the package's folder below it)
PACKAGES = {
    "functions": (FUNCTIONS, "migrator"),
    "simulator": (ROOT, "infra/sim"),
    "cli": (ROOT / "cli", "migrator_cli"),
}


def modules(base: Path = FUNCTIONS, package: str = "migrator") -> dict[str, tuple[Path, bool]]:
    """{dotted name: (path, is a package's __init__)} for every module of `package` (a folder below `base`)."""
    found = {}
    for path in (base / package).rglob("*.py"):
        parts = list(path.relative_to(base).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def imports(known: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """{module: the package's modules it imports anywhere in its text}; `from .x import name` counts as
    importing `x.name` when that is a module, else `x` (the package whose __init__ defines the name)."""
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, (path, package) in known.items():
        anchor = name.split(".") if package else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = anchor[: len(anchor) - node.level + 1] if node.level else []
                prefix = ".".join(base + ([node.module] if node.module else []))
                targets = [
                    f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix for alias in node.names
                ]
            for target in targets:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_imports_at_every_level_and_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    graph = imports(modules())
    assert "migrator.fate" in graph["migrator.uploader"]  # `from . import fate as F`
    assert "migrator.sources" in graph["migrator.upload.handoff"]  # `from ..sources import ...`
    assert "migrator.presign" in graph["migrator.sources"]  # inside `resolve`: a function's import counts


def test_the_finder_sees_the_simulators_and_the_clis_imports_lazy_and_for_types_alike():
    sim = imports(modules(*PACKAGES["simulator"]))
    assert "infra.sim.catalog" in sim["infra.sim.config"]  # `from . import catalog`
    assert "infra.sim.profile" in sim["infra.sim.platforms.mux"]  # `from ..profile import ...`
    assert "infra.sim.platforms" in sim["infra.sim"]  # the package registers its profiles
    assert "infra.sim.drift" in sim["infra.sim.config"]  # inside a function
    assert "infra.sim.config" in sim["infra.sim.profile"]  # under TYPE_CHECKING
    cli = imports(modules(*PACKAGES["cli"]))
    assert "migrator_cli.doctor" in cli["migrator_cli.commands.doctor"]  # `from ..doctor import` in a function


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_imports_itself_round_a_circle(package):
    assert circles(imports(modules(*PACKAGES[package]))) == []
