"""The package's import graph read with ``ast`` (nothing imported): every module by dotted name, as pyproject's
``package-dir`` maps the folders, and every import statement of each, at module level or inside a function."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_dirs() -> dict[str, Path]:
    """Package name → folder, as pyproject's ``package-dir`` maps them (``faim.encoders`` → ``encoders/``)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("package-dir"))
    pairs = line.split("{", 1)[1].rsplit("}", 1)[0].split(",")
    return {key.strip().strip('"'): ROOT / value.strip().strip('"') for key, value in (p.split("=") for p in pairs)}


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name, from the mapped folders (a package is its ``__init__``)."""
    found: dict[str, Path] = {}
    dirs = package_dirs()
    for package, folder in dirs.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


MODULES = modules()


@dataclass(frozen=True)
class Import:
    """One import statement of a module: what it names, where, and how it runs."""

    source: str
    target: str
    line: int
    in_function: bool
    commented: bool


def resolve(name: str) -> str | None:
    """The deepest module of the package ``name`` lies in (``faim.data.post.Post`` → ``faim.data.post``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


class ImportReader(ast.NodeVisitor):
    """Every import statement of one module, including those inside functions and ``if TYPE_CHECKING:``."""

    def __init__(self, module: str, path: Path) -> None:
        self.module, self.path = module, path
        self.lines = path.read_text(encoding="utf-8").splitlines()
        self.depth = 0
        self.found: list[Import] = []

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def add(self, name: str, node: ast.stmt) -> None:
        commented = any("#" in self.lines[i - 1] for i in (node.lineno, node.lineno - 1) if i >= 1)
        self.found.append(Import(self.module, name, node.lineno, self.depth > 0, commented))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = self.module if self.path.name == "__init__.py" else self.module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}".rstrip(".")
        for alias in node.names:
            full = f"{base}.{alias.name}"
            self.add(full if full in MODULES else base, node)


def imports() -> list[Import]:
    found = []
    for module, path in sorted(MODULES.items()):
        reader = ImportReader(module, path)
        reader.visit(ast.parse(path.read_text(encoding="utf-8")))
        found += reader.found
    return found


IMPORTS = imports()
