"""No function of the pure package ``engine`` is longer than 60 lines: a long one is split into named steps, so that a
reader sees them.

Every ``.py`` file under ``engine/`` is parsed (``ast``), and every function counts, methods and nested functions
too, from its ``def`` line to its last line, docstring included (decorators not).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
MAX_LINES = 60


def function_lengths(source: str) -> Iterator[tuple[int, str, int]]:
    """(first line, name, length in lines) of every function in ``source``, nested ones included."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno if node.end_lineno is not None else node.lineno
            yield node.lineno, node.name, end - node.lineno + 1


def engine_files() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def long_functions(files: list[Path], limit: int = MAX_LINES) -> list[str]:
    """``file:line name length`` of every function of ``files`` longer than ``limit`` lines."""
    found = []
    for path in files:
        for line, name, length in function_lengths(path.read_text(encoding="utf-8")):
            if length > limit:
                found.append(f"{path.relative_to(ROOT)}:{line} {name} {length}")
    return found


def test_the_walk_measures_every_function() -> None:
    source = (
        "@decorated\n"
        "def f():\n"
        '    """Doc."""\n'
        "    return 1\n"
        "\n"
        "class C:\n"
        "    async def g(self):\n"
        "        def h():\n"
        "            pass\n"
        "        return h\n"
    )
    assert sorted(function_lengths(source)) == [(2, "f", 3), (7, "g", 4), (8, "h", 2)]
    files = engine_files()
    assert ENGINE / "session" / "carry.py" in files
    assert ENGINE / "manifests" / "kueue.py" in files


def test_no_engine_function_is_longer_than_60_lines() -> None:
    found = long_functions(engine_files())
    assert not found, f"functions longer than {MAX_LINES} lines (split them into named steps):\n" + "\n".join(found)
