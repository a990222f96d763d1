"""What an install without torch brings is what the exported runtime needs: the modules ``faim.runtime`` and
``faim score --runtime onnx`` (its workers too) run in import, at module level and through every faim module they
import, only packages that the base dependencies and the ``runtime`` extra install; neither names the torch stack,
which the ``torch`` extra installs."""

from __future__ import annotations

import re
import sys
from importlib.metadata import packages_distributions

import pytest
from import_graph import IMPORTS, ROOT, resolve
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib")

RUNTIME_MODULES = (
    "faim.runtime",
    "faim.scoring.exported",
    "faim.cli.main",
    "faim.cli.score_args",
    "faim.cli.score_cmd",
)
"""Where the exported runtime starts: the Python API and the command (and worker) that score a dump on it."""
TORCH_STACK = {"torch", "torchvision", "transformers", "timm", "pytorch-lightning", "lightning", "scikit-learn"}


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(*extras: str) -> set[str]:
    """The distributions pyproject's base dependencies and ``extras`` name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + [r for extra in extras for r in project["optional-dependencies"][extra]]
    return {normalised(Requirement(r).name) for r in requirements}


def third_party_imports(starts: tuple[str, ...]) -> dict[str, str]:
    """Top-level third-party module → the faim module that imports it at module level, over every faim module
    ``starts`` import at module level (and the packages holding them, which Python runs first)."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    stack = list(starts)
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        stack += [module.rsplit(".", i)[0] for i in range(1, module.count(".") + 1)]
        for statement in (i for i in IMPORTS if i.source == module and not i.in_function):
            top = statement.target.split(".")[0]
            if top == "faim":
                stack.append(resolve(statement.target))
            elif top not in sys.stdlib_module_names and top != "__future__":
                found.setdefault(top, module)
    return found


def test_the_runtime_imports_only_what_the_base_and_the_runtime_extra_install() -> None:
    installed = declared("runtime")
    distributions = packages_distributions()
    missing = {
        f"{module} (imported by {importer}, from {distributions.get(module)})"
        for module, importer in third_party_imports(RUNTIME_MODULES).items()
        if not {normalised(d) for d in distributions.get(module, [module])} & installed
    }
    assert not missing, sorted(missing)
    assert {"onnxruntime", "tokenizers", "numpy", "pillow", "pyarrow"} <= installed
    assert not TORCH_STACK & installed


def test_the_torch_extra_installs_what_training_export_and_explanations_import() -> None:
    installed = declared("torch")
    distributions = packages_distributions()
    missing = {
        module
        for module in third_party_imports(("faim.cli.train_cmd", "faim.cli.export_cmd", "faim.cli.explain_cmd"))
        if not {normalised(d) for d in distributions.get(module, [module])} & installed
    }
    assert not missing, sorted(missing)
