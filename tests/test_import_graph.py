"""stonelab's modules import each other without circles, and choose a game only through the registry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from stonelab.games import registry

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "stonelab"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path, known: dict[str, Path]) -> set[str]:
    """The stonelab modules ``path`` imports anywhere in it (functions' imports too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # "from stonelab.games import registry": the module, if it is one
                sub = f"{node.module}.{alias.name}"
                if sub in known:
                    out.add(sub)
                elif node.module in known:
                    out.add(node.module)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    known = modules()
    graph = {name: imports_of(path, known) - {name} for name, path in known.items()}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def any_of(words) -> str:
    """A regex alternative of ``words``, longest first (so "gomoku" is tried before "go")."""
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


# A game chosen by its name or its rules' type, outside the games' own packages: every
# registered game's, so a new game is covered without editing this file.
GAMES = any_of(registry.names())
RULES = any_of(registry.get(name).rules.__name__ for name in registry.names())
GAME_SWITCH = re.compile(rf"""(==|!=)\s*["']({GAMES})["']|["']({GAMES})["']\s*(==|!=)"""
                         rf"""|startswith\(["']({GAMES})|isinstance\([^)]*\b({RULES})\b""")


# bench's "--game gomoku --board-size N --win-length K" form names a game on the command line
EXEMPT = {("stonelab/bench.py", 'if args.game == "gomoku":')}


def test_no_game_switch_outside_the_registry():
    games = PACKAGE / "games"
    hits = [(str(path.relative_to(SRC)), line.strip())
            for path in PACKAGE.rglob("*.py") if games not in path.parents
            for line in path.read_text().splitlines() if GAME_SWITCH.search(line)]
    assert [hit for hit in hits if hit not in EXEMPT] == []


def test_the_switch_pattern_sees_switches():
    for line in ['if game == "go":', "x.startswith('gomoku')", "isinstance(rules, GoRules)", 'if "othello" != g:',
                 'if spec.name == "connect4":', "isinstance(rules, (Connect4Rules, GoRules))"]:
        assert GAME_SWITCH.search(line), line
    assert not GAME_SWITCH.search('registry.get("go")')
