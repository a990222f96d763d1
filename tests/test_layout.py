"""The package's floors: dependencies run one way, read from the import graph with ``ast`` (nothing imported);
and what importing one piece loads, checked in a fresh interpreter.

Floors, lowest first: the ground floor (registry, the warning class, message wording, Post and batch types, weights,
the encoder contract, the preprocessing that needs no torch); the
components (encoders, fusion, tasks, side by side); the core (everything else in ``faim/``); evaluation
(``eval/``); the entry points (the CLI, the Python API, the benchmark harness). A module may import its own floor
and those below; no import, at module level or inside a function, points up, and no loop runs through module-level
imports.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys

import pytest
from import_graph import IMPORTS, MODULES, ROOT, resolve

FLOORS: list[tuple[str, tuple[str, ...]]] = [  # checked in this order; the first floor a module matches is its own
    (
        "entry",
        (
            "faim",
            "faim.__main__",
            "faim.api",
            "faim.cli",
            "faim.cli.*",
            "faim.eval.bench_*",
            "faim.eval.benchmark",
            "faim.eval.benchmark_*",
            "faim.eval.group_holdout",
            "faim.eval.trained_holdout",
        ),
    ),
    ("evaluation", ("faim.eval", "faim.eval.*")),
    ("components", ("faim.encoders", "faim.encoders.*", "faim.fusion", "faim.fusion.*", "faim.tasks", "faim.tasks.*")),
    (
        "ground",
        (
            "faim.version",
            "faim.registry",
            "faim.notices",
            "faim.wording",
            "faim.weights",
            "faim.encoder",
            "faim.data",
            "faim.data.post",
            "faim.data.batch",
            "faim.preprocess",
            "faim.preprocess.*",
        ),
    ),
    ("core", ("faim.*",)),
]
ORDER = ["ground", "components", "core", "evaluation", "entry"]

COMMAND_LINE_HELPERS = {"faim.cli.common"}
"""What of ``faim.cli`` a benchmark may import: the argument types and the column mapping (``--map``) every command
line reads alike."""

OPTIONAL = {"ray", "ray.data", "datasets", "pandas"}
"""Third-party modules a function may import when it runs: optional extras (faim-sdk[ray], faim-sdk[hf], with the
pandas Hugging Face datasets reads CSV files by)."""

DEFERRED = {"transformers", "timm", "torchvision", "sklearn", "scipy", "captum", "matplotlib", "pytorch_lightning"}
"""Heavy libraries (with their submodules) a function may import when it first needs them: only some components use
them, once built (an encoder's model, a fit, an explanation's attributions), and only evaluation draws plots, so
registering every built-in component, or importing the Python API, loads none of them."""

COMPONENT_LIBRARIES = ["transformers", "timm", "torchvision", "sklearn", "matplotlib", "captum"]
"""What only some components load, once built (matplotlib comes with captum)."""


def floor(module: str) -> str:
    return next(name for name, patterns in FLOORS if any(fnmatch.fnmatchcase(module, p) for p in patterns))


INTERNAL = [(i, resolve(i.target)) for i in IMPORTS if i.target.split(".")[0] == "faim"]


def where(module: str) -> str:
    return str(MODULES[module].relative_to(ROOT))


def test_the_graph_covers_every_folder_and_the_floors_every_module() -> None:
    assert {"faim.registry", "faim.encoders.hf_text", "faim.fusion.concat", "faim.eval.metrics"} <= set(MODULES)
    assert {floor(module) for module in MODULES} == set(ORDER)
    assert all(target is not None for _, target in INTERNAL), [i for i, t in INTERNAL if t is None]


def test_no_import_points_up() -> None:
    upward = [
        f"{where(i.source)}:{i.line} ({floor(i.source)}) imports {where(target)} ({floor(target)})"
        for i, target in INTERNAL
        if target and ORDER.index(floor(target)) > ORDER.index(floor(i.source))
    ]
    assert not upward, "\n".join(upward)


def test_no_benchmark_imports_the_command_line_but_its_argument_helpers() -> None:
    """The benchmarks (``eval/``, on the entry floor) are entry points beside the command line, not on top of it: a
    default or a check both use lives in the library below them, and of ``faim.cli`` only ``COMMAND_LINE_HELPERS``
    is shared."""
    wrong = [
        f"{where(i.source)}:{i.line} imports {where(target)}"
        for i, target in INTERNAL
        if i.source.startswith("faim.eval.")
        and target
        and (target == "faim.cli" or target.startswith("faim.cli."))
        and target not in COMMAND_LINE_HELPERS
    ]
    assert not wrong, "\n".join(wrong)


def test_no_loop_runs_through_module_level_imports() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for i, target in INTERNAL:
        if target and target != i.source and not i.in_function:
            graph[i.source].add(target)
    loops = []
    for start in sorted(graph):
        path = find_path(graph, start, start)
        if path:
            loops.append(" -> ".join(where(module) for module in path))
    assert not loops, "module-level import loops:\n" + "\n".join(loops)


def find_path(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A path of imports from ``start`` back to ``goal`` (depth-first), or ``None``."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph[node]):
            if nxt == goal:
                return [*path, goal]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def test_a_function_imports_only_an_optional_or_deferred_dependency_and_says_so() -> None:
    deferred = [i for i in IMPORTS if i.in_function]
    allowed = [i for i in deferred if i.target in OPTIONAL or i.target.split(".")[0] in DEFERRED]
    wrong = [f"{where(i.source)}:{i.line} imports {i.target}" for i in deferred if i not in allowed]
    silent = [f"{where(i.source)}:{i.line} imports {i.target} without a comment" for i in deferred if not i.commented]
    assert not wrong + silent, "\n".join(wrong + silent)


def test_the_api_names_are_not_modules_of_the_package() -> None:
    """``faim.<name>`` is looked up lazily; a module of the same name would shadow it once imported."""
    import faim

    assert not [name for name in faim.EXPORTS if f"faim.{name}" in MODULES]


def loaded_after(statement: str) -> tuple[list[str], list[str]]:
    """The faim modules and the heavy third-party packages a fresh interpreter holds after ``statement``."""
    heavy = ["pyarrow", "safetensors", "pytorch_lightning", "scipy", *COMPONENT_LIBRARIES]
    code = (
        f"import json, sys\n{statement}\n"
        f"print(json.dumps([sorted(m for m in sys.modules if m.split('.')[0] == 'faim'), "
        f"[m for m in {heavy!r} if m in sys.modules]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    faim_modules, third_party = json.loads(out.splitlines()[-1])
    return faim_modules, third_party


GROUND = ["faim"] + [module for module in MODULES if floor(module) == "ground"]  # with the lazy package itself


@pytest.mark.slow
def test_importing_faim_loads_only_its_version() -> None:
    assert loaded_after("import faim") == (["faim", "faim.version"], [])


@pytest.mark.slow
@pytest.mark.parametrize("module", ["faim.fusion.concat", "faim.tasks.binary"])
def test_a_fusion_or_head_module_loads_torch_and_the_ground_floor_only(module: str) -> None:
    faim_modules, third_party = loaded_after(f"import {module}")
    package = module.rpartition(".")[0]
    assert [m for m in faim_modules if m not in GROUND and not m.startswith(package)] == []
    assert third_party == []


@pytest.mark.slow
def test_an_encoder_module_loads_the_encoders_and_the_ground_floor_only() -> None:
    """The encoders package registers every built-in encoder, but neither the libraries an encoder loads once built
    (transformers, timm, scikit-learn) nor anything of the training or evaluation stack."""
    faim_modules, third_party = loaded_after("import faim.encoders.tiny_image")
    assert [m for m in faim_modules if m not in GROUND and not m.startswith("faim.encoders")] == []
    assert not {"pytorch_lightning", *COMPONENT_LIBRARIES} & set(third_party)


@pytest.mark.slow
def test_importing_the_detector_loads_no_library_only_some_components_need() -> None:
    """Every scoring process imports the detector, and with it every built-in component."""
    _, third_party = loaded_after("import faim.detector")
    assert not set(COMPONENT_LIBRARIES) & set(third_party)


@pytest.mark.slow
def test_importing_the_runtime_loads_neither_pyarrow_nor_the_data_readers() -> None:
    """The torch-free runtime scores posts it is given: warning of what none of them holds, it reads no file, so
    neither the readers of files (``faim.data.sources``, the checks of a recipe's splits) nor pyarrow load with it."""
    faim_modules, third_party = loaded_after("import faim.runtime.model")
    assert "pyarrow" not in third_party
    assert [m for m in faim_modules if m in {"faim.data.preflight", "faim.data.sources", "faim.data.tabular"}] == []


@pytest.mark.slow
def test_importing_evaluation_loads_neither_scikit_learn_nor_matplotlib() -> None:
    """Metrics and plots import them when they first compute or draw."""
    _, third_party = loaded_after("import faim.eval, faim.eval.evaluate")
    assert not set(COMPONENT_LIBRARIES) & set(third_party)


@pytest.mark.slow
def test_importing_the_python_api_loads_no_library_only_some_components_need_but_what_lightning_loads() -> None:
    """Importing PyTorch Lightning loads torchmetrics, which loads transformers, torchvision and matplotlib; faim adds
    none (scikit-learn included)."""
    _, lightning = loaded_after("import pytorch_lightning")
    _, api = loaded_after("import faim.api")
    assert set(COMPONENT_LIBRARIES) & set(api) <= set(lightning)


@pytest.mark.slow
def test_a_model_whose_encoders_need_none_of_them_builds_embeds_saves_and_loads_without_them() -> None:
    model = {
        "encoders": {"text": {"type": "tiny_e5"}, "meta": {"type": "meta_numeric", "fields": ["age"]}},
        "fusion": {"type": "concat"},
        "heads": {"harm": {"type": "binary", "labels": ["no", "yes"]}},
    }
    statement = (
        f"import tempfile\nfrom faim.assembly import build_model, task_specs\nfrom faim.detector import Detector\n"
        f"model = build_model({model!r})\nencoder = model.encoders['text']\n"
        "encoder(encoder.preprocessor()(['a post']))\n"
        "with tempfile.TemporaryDirectory() as folder:\n"
        f"    Detector(model, task_specs({model!r})).save(folder + '/m')\n"
        "    Detector.load(folder + '/m')"
    )
    _, third_party = loaded_after(statement)
    assert not set(COMPONENT_LIBRARIES) & set(third_party)  # nor when it is saved and loaded


@pytest.mark.slow
@pytest.mark.parametrize(
    ("package", "table", "expected"),
    [
        ("faim.fusion", "FUSIONS", {"attention", "concat", "gated", "interaction"}),
        ("faim.tasks", "HEADS", {"binary", "multiclass", "multilabel"}),
        ("faim.encoders", "ENCODERS", {"hf_text", "timm_image", "meta_numeric", "tiny_text", "tiny_image"}),
    ],
)
def test_built_in_components_register_when_their_package_is_imported(package: str, table: str, expected: set) -> None:
    code = f"import {package}, json\nfrom faim.registry import {table}\nprint(json.dumps(sorted({table})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert expected <= set(json.loads(out.splitlines()[-1]))
