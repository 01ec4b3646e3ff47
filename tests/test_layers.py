"""The packages' layers, read from the source: which top-level package may import which.

Every ``.py`` file of every top-level package is parsed (``ast``), and every import statement counts, including the
ones inside functions and under ``if TYPE_CHECKING``: hiding an import in a function does not make the dependency go
away. From the bottom up: ``engine`` (pure) imports no other package of the project; ``quotas`` (the trees) imports
neither ``scheduling``, ``planning`` nor ``frontend``; ``scheduling`` imports neither ``planning`` nor ``frontend``;
and the graph of the packages has no cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_LAYERS = {"tests"}  # the tests may import anything; nothing imports them (checked below)

FORBIDDEN: dict[str, set[str]] = {
    # the shared kernel: below every app (the engine only)
    "core": {"quotas", "scheduling", "planning", "frontend", "changerequests", "security", "identity", "controlplane"},
    "quotas": {"scheduling", "planning", "frontend", "changerequests"},
    "scheduling": {"planning", "frontend", "changerequests"},
    "planning": {"changerequests"},  # change requests use the what-if, never the other way round
    # tokens, secrets, the security log: below the apps
    "security": {"quotas", "scheduling", "planning", "frontend", "changerequests"},
    "changerequests": {"frontend"},  # the pages show the requests; the requests know no page
}


def packages(root: Path) -> list[str]:
    """The top-level packages under ``root`` (directories with an ``__init__.py``)."""
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file())


def imported_modules(source: str) -> Iterator[str]:
    """The absolute module names that ``source`` imports, wherever the statement stands."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def package_imports(root: Path) -> dict[str, dict[str, list[str]]]:
    """For each top-level package, the other top-level packages it imports, each with the files that do."""
    names = set(packages(root))
    graph: dict[str, dict[str, list[str]]] = {name: {} for name in names}
    for name in sorted(names):
        for path in sorted((root / name).rglob("*.py")):
            for module in imported_modules(path.read_text(encoding="utf-8")):
                target = module.split(".")[0]
                if target in names and target != name:
                    graph[name].setdefault(target, []).append(str(path.relative_to(root)))
    return graph


def violations(graph: dict[str, dict[str, list[str]]]) -> list[str]:
    """Every import that breaks a layer rule, with the files that make it."""
    out = []
    for source, targets in sorted(graph.items()):
        forbidden = set(graph) - {source} if source == "engine" else FORBIDDEN.get(source, set())
        if source not in NOT_LAYERS:
            forbidden = forbidden | NOT_LAYERS
        for target in sorted(forbidden & set(targets)):
            out.append(f"{source} imports {target}: {', '.join(sorted(set(targets[target])))}")
    return out


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The import cycles between the packages other than the tests, each as the path that closes it."""
    edges = {
        s: sorted(t for t in targets if t not in NOT_LAYERS) for s, targets in graph.items() if s not in NOT_LAYERS
    }
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        for target in edges.get(node, ()):
            if target in path:
                found.append([*path[path.index(target) :], target])
            elif target not in done:
                visit(target, [*path, target])
        done.add(node)

    for start in sorted(edges):
        if start not in done:
            visit(start, [start])
    return found


@pytest.fixture(scope="module")
def repository_graph() -> dict[str, dict[str, list[str]]]:
    """The repository's own graph, read once for the tests below (a walk parses every file of every package)."""
    return package_imports(ROOT)


def test_the_walk_sees_every_package(repository_graph: dict[str, dict[str, list[str]]]) -> None:
    found = packages(ROOT)
    for name in ("engine", "core", "quotas", "scheduling", "planning", "frontend", "controlplane", "tests"):
        assert name in found
    assert "scheduling" in repository_graph["planning"]  # the walk reads imports (planning reads the cluster)


def test_no_package_imports_a_layer_above_it(repository_graph: dict[str, dict[str, list[str]]]) -> None:
    assert violations(repository_graph) == []


def test_the_packages_import_each_other_without_cycles(repository_graph: dict[str, dict[str, list[str]]]) -> None:
    assert cycles(repository_graph) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


def test_an_import_inside_a_function_is_a_violation(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/values.py": "import json\n",
            "quotas/__init__.py": "",
            "quotas/services.py": "def facts():\n    from scheduling.models import Pod\n    return Pod\n",
            "scheduling/__init__.py": "",
            "scheduling/models.py": "from quotas.models import Queue\nfrom engine import values\n",
        },
    )
    assert violations(package_imports(tmp_path)) == ["quotas imports scheduling: quotas/services.py"]


def test_the_engine_may_import_no_other_package(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/values.py": "import controlplane.settings\n",
            "controlplane/__init__.py": "",
        },
    )
    assert violations(package_imports(tmp_path)) == ["engine imports controlplane: engine/values.py"]


def test_a_cycle_between_packages_is_found(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "controlplane/__init__.py": "",
            "controlplane/api.py": "from quotas.services import lock\n",
            "quotas/__init__.py": "",
            "quotas/services.py": "from controlplane.api import thing\n",
            "tests/__init__.py": "from quotas import services\n",
        },
    )
    assert cycles(package_imports(tmp_path)) == [["controlplane", "quotas", "controlplane"]]


# -- the engine's floors ----------------------------------------------------------------------------------------

# The engine's parts from the ground up: a module may import its own floor and the floors below, never one above.
# A name ending in ``.*`` is a family (every plugin's ``arguments`` module); a longer name wins over a shorter one.
ENGINE_FLOORS: tuple[tuple[str, ...], ...] = (
    ("engine.vocabulary", "engine.collector"),  # words and the garbage collector's pause: nothing below them
    ("engine.resources",),  # quantities, names, their order
    # amounts: Volcano's comparisons; the per-user limits' data (read by the field table); waits to start per node
    ("engine.wording", "engine.limits", "engine.treefields", "engine.amounts", "engine.userlimits", "engine.waits"),
    ("engine.policy", "engine.session.plugins", "engine.session.plugins.*.arguments"),  # the policy and its readers
    ("engine.usage", "engine.admission"),  # past usage (fairness over time); the admission levers' data
    # the snapshot and the trees' specs; a queue's Kueue levers; the usage Kueue's LocalQueues keep across sessions
    ("engine.objects", "engine.kueuepolicy", "engine.localqueues"),
    ("engine.fairshare",),  # the fair-share math
    ("engine.values", "engine.rules", "engine.flavors"),  # engine.flavors: Kueue's flavor assignment
    ("engine.lending", "engine.changes", "engine.partial"),  # engine.partial: Kueue's partial admission
    ("engine.audit",),
    ("engine.session", "engine.session.plugins.*.plugin"),  # the scheduling session: framework, actions, plugins
    ("engine.manifests", "engine.simulate"),
    ("engine.replay",),
)


def _engine_floor(module: str) -> int | None:
    """The floor of an ``engine`` module (its longest matching part), None for the package itself."""
    best: tuple[int, int] | None = None  # (length of the matched part, floor)
    for floor, parts in enumerate(ENGINE_FLOORS):
        for part in parts:
            pattern = part.split(".")
            names = module.split(".")
            if len(names) < len(pattern):
                continue
            matches = all(p in ("*", n) for p, n in zip(pattern, names, strict=False))
            if matches and (best is None or len(pattern) > best[0]):
                best = (len(pattern), floor)
    return None if best is None else best[1]


def engine_upward_imports(root: Path) -> list[str]:
    """Every import in ``root/engine`` of a module on a higher floor than the importer's, and every module on no
    floor."""
    out = []
    for path in sorted((root / "engine").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        own = _engine_floor(module)
        if own is None:
            if module != "engine":
                out.append(f"{module} is on no floor (ENGINE_FLOORS)")
            continue
        for target in sorted(set(imported_modules(path.read_text(encoding="utf-8")))):
            floor = _engine_floor(target) if target.startswith("engine.") else None
            if floor is not None and floor > own:
                out.append(f"{module} (floor {own}) imports {target} (floor {floor})")
    return out


def test_the_engine_imports_no_floor_above() -> None:
    assert engine_upward_imports(ROOT) == []


def test_an_upward_import_in_the_engine_is_found(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/objects.py": "from engine.session.session import Session\n",
            "engine/session/__init__.py": "",
            "engine/session/session.py": "from engine.objects import Snapshot\n",
            "engine/session/plugins/gang/arguments.py": "from engine.policy.arguments import declare\n",
        },
    )
    assert engine_upward_imports(tmp_path) == [
        "engine.objects (floor 5) imports engine.session.session (floor 10)",
    ]
