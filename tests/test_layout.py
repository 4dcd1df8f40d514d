"""The layout's import rules (DESIGN.md), read from the source: formats import only the model,
io and providers; the cook only the model; the viewer never a format; Streamlit only in the
pages and the entry scripts; no import circle anywhere."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("parsers", "viewer")
STREAMLIT_ALLOWED = ("viewer.pages", "viewer.main", "viewer.asgi", "viewer.serve", "app")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {module_name(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}
    found["app"] = REPO / "app.py"
    return found


def imports(name: str, path: Path, source: str | None = None) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file, lazy ones included; `from a import b`
    names `a.b` when that is a module of ours, else `a`."""
    ours = modules()
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(source if source is not None else path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[:len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                out.append((full if full in ours else base, node.lineno))
    return out


def within(mod: str, *prefixes: str) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def own_format_package(mod: str) -> str:
    """parsers.formats.<name>: a format's module or sub-package, which may import itself."""
    return ".".join(mod.split(".")[:3])


def rule_breaks(probe: tuple[str, str] | None = None) -> list[str]:
    """Every break of the rules; `probe` = (module name, source) checks a made-up module too."""
    breaks = []
    found = {mod: (path, None) for mod, path in modules().items()}
    if probe:
        found[probe[0]] = (REPO / (probe[0].replace(".", "/") + ".py"), probe[1])
    for mod, (path, source) in sorted(found.items()):
        for imp, line in imports(mod, path, source):
            where = f"{path.relative_to(REPO)}:{line} imports {imp}"
            ours = within(imp, *PACKAGES)
            if within(imp, "streamlit") and not within(mod, *STREAMLIT_ALLOWED):
                breaks.append(f"{where}: Streamlit belongs to viewer/pages and the entry scripts")
            if not ours:
                continue
            if within(mod, "parsers.formats") and mod != "parsers.formats":
                if not (within(imp, "parsers.model", "parsers.io", "parsers.providers")
                        or within(imp, own_format_package(mod))):
                    breaks.append(f"{where}: a format imports only parsers.model, parsers.io and parsers.providers")
            elif within(mod, "parsers.cook") and not within(imp, "parsers.model", "parsers.cook"):
                breaks.append(f"{where}: the cook imports only parsers.model")
            elif within(mod, "parsers.model") and not within(imp, "parsers.model"):
                breaks.append(f"{where}: the model imports nothing else of ours")
            elif within(mod, "parsers.io") and not within(imp, "parsers.model", "parsers.io"):
                breaks.append(f"{where}: io imports only parsers.model")
            elif within(mod, "parsers.providers") and not within(imp, "parsers.model", "parsers.providers"):
                breaks.append(f"{where}: providers import only parsers.model")
            if within(mod, "viewer", "app") and within(imp, "parsers") and imp != "parsers" \
                    and not within(imp, "parsers.model", "parsers.pipeline", "parsers.registry"):
                breaks.append(f"{where}: the viewer reads parsers only through model, pipeline and registry")
            if within(mod, "parsers") and within(imp, "viewer"):
                breaks.append(f"{where}: parsers never import the viewer")
            if within(mod, "viewer.analysis", "viewer.render", "viewer.library") and within(imp, "viewer.pages"):
                breaks.append(f"{where}: only pages and entry scripts use the pages' state")
    return breaks


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        targets = set()
        for imp, _ in imports(mod, path):
            # An import of a.b.c runs a, a.b and a.b.c: each is an edge unless it is the importer's own package.
            parts = imp.split(".")
            for i in range(1, len(parts) + 1):
                t = ".".join(parts[:i])
                if t in mods and t != mod and not mod.startswith(t + "."):
                    targets.add(t)
        graph[mod] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_import_rules_hold():
    assert rule_breaks() == []


def test_no_import_circle():
    assert cycles(import_graph()) == []


def test_the_checks_see_a_break():
    # The rules are only as good as the reading of imports: a format importing the cook or
    # Streamlit, a viewer module importing a format, and modules importing in a circle are caught.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    found = [b for b in rule_breaks(("parsers.formats.probe", "from parsers.cook import pricing\nimport streamlit\n")) if "probe" in b]
    assert [b.split(": ", 1)[1] for b in found] == [
        "a format imports only parsers.model, parsers.io and parsers.providers",
        "Streamlit belongs to viewer/pages and the entry scripts"]
    found = [b for b in rule_breaks(("viewer.analysis.probe", "def f():\n    from parsers.formats import arena\n")) if "probe" in b]
    assert [b.split(": ", 1)[1] for b in found] == [
        "the viewer reads parsers only through model, pipeline and registry"]


@pytest.mark.parametrize("pkg", ["parsers/formats", "parsers/cook", "parsers/io", "parsers/providers",
                                 "parsers/model", "viewer/analysis", "viewer/render", "viewer/pages",
                                 "viewer/library"])
def test_the_layout_has_its_parts(pkg):
    assert (REPO / pkg / "__init__.py").is_file()
