"""Model artifacts: a directory anyone can inspect, loaded without unpickling or running its code.

Layout::

    recipe.yaml          the recipe: the training recipe of a trained model, or, for a model composed in code, the
                         ``model:`` section written out from its modules' constructor arguments
    model.safetensors    every weight of the WholePostModel
    faim.json            faim and library versions, the element kinds the model embeds and those it fuses
                         (``faim.artifact_manifest.fused_kinds``), tasks, labels, thresholds, temperatures, logit
                         shifts (and those of pooled logits, for a recipe with eval.pool_by_image, with the
                         weight of the crowd's corrections where eval.crowd_corrections fitted one),
                         preprocessing, per-encoder rebuild arguments, and the sha256 of every other file
    encoders/<name>/     what rebuilding an encoder needs besides weights (config, tokenizer files)

Loading checks every listed hash first: a modified or missing file fails with a message naming it. The
architecture is rebuilt from ``recipe.yaml``'s ``model:`` section and the weights loaded from safetensors.
``Detector.save`` and ``Detector.load`` (``faim.load``) go through here.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import safetensors.torch
import torch

from faim.artifact_manifest import (
    FORMAT_VERSION,
    MANIFEST,
    RECIPE,
    WEIGHTS,
    ArtifactError,
    folder_given,
    own_file,
    read_manifest,
    verify_files,
)
from faim.assembly import build_model, model_section, task_specs
from faim.calibration.fit import Calibration
from faim.data.targets import TaskSpec
from faim.file_digests import file_digests, file_finder, portable, sealed
from faim.folders import check_replaceable, replacing, umask_permissions
from faim.model import WholePostModel
from faim.recipe import Recipe
from faim.registry import SavedModelWarning, built, rebuilding_saved
from faim.runtime.bundle import manifest_entry, setting, task_labels, whole_number
from faim.version import __version__


@dataclass
class Artifact:
    """What a saved model holds.

    Attributes:
        model: The network.
        tasks: Task specs, one per head.
        calibration: The per-post calibration.
        pooled: The calibration of logits pooled by shared picture, or ``None``.
        max_elements: Images and comments taken per post.
        pool_by_image: The cosine linking posts that share a picture, or ``None``.
        recipe: The recipe (only its ``model:`` section for a model composed in code).
    """

    model: WholePostModel
    tasks: list[TaskSpec]
    calibration: Calibration
    pooled: Calibration | None
    max_elements: int
    pool_by_image: float | None
    recipe: Recipe


def architecture_recipe(model: WholePostModel, tasks: list[TaskSpec]) -> Recipe:
    """A recipe of ``model``'s architecture alone: its ``model:`` section written out from the arguments its
    components were built with (``faim.assembly.model_section``); the other sections are left out.

    Raises:
        ValueError: As ``model_section``, naming what cannot be written.
    """
    return Recipe.from_dict({"model": model_section(model, tasks)}, "<python>")


def save_artifact(artifact: Artifact, directory: str | Path) -> Path:
    """Write ``artifact`` to ``directory``, replacing the model there if there is one.

    Raises:
        FileExistsError: If ``directory`` holds anything but a model (``faim.folders.check_replaceable``); a save that
            fails for another reason leaves ``directory`` as it was and nothing beside it.
        ValueError: When the recipe would not load the model again (``check_rebuilt``), before its weights are written.
    """
    target = Path(directory)
    check_replaceable(target, MANIFEST)
    with replacing(target, ".faim-") as staging:
        assets = {
            name: encoder.export_assets(staging / "encoders" / name)
            for name, encoder in artifact.model.encoders.items()
        }
        check_rebuilt(artifact, assets, target)
        write_files(artifact, assets, staging)
    return target


def check_rebuilt(artifact: Artifact, assets: dict[str, dict[str, Any]], target: Path) -> None:
    """Refuse to save a model its recipe would not load again: the recipe's ``model:`` section, built as loading
    builds it (each encoder from ``assets``, the rebuild arguments its ``export_assets`` gave), must give the model's
    tasks in its order and weights of the same names and shapes (``rebuilt_model``).

    Raises:
        RecipeError: Naming the recipe's file and the component's recipe path, for an argument its constructor
            refuses (``Recipe.building``).
        ValueError: Naming ``target`` (not written), the recipe's file, the recipe's tasks and the model's where they
            differ, and each component whose weights differ (``model.heads.NAME``, ``model.fusion``,
            ``model.encoders.KIND``) with its first weight that does.
    """
    with artifact.recipe.building():
        rebuilt = rebuilt_model(artifact.recipe.model, assets)
    problems = []
    tasks, have = [task.name for task in task_specs(artifact.recipe.model)], [task.name for task in artifact.tasks]
    if tasks != have:
        problems.append(f"the recipe's tasks {tasks}, the model's {have}")
    problems += weight_differences(shapes(rebuilt), shapes(artifact.model))
    if problems:
        raise ValueError(
            f"{target}: not saved: the model: section of the recipe {artifact.recipe.source} builds another model "
            f"({'; '.join(problems)}); save it with a recipe whose model: section describes this one, or set the "
            "detector's recipe to None to save its architecture alone"
        )


def rebuilt_model(model: dict[str, Any], assets: dict[str, dict[str, Any]]) -> WholePostModel:
    """The model a recipe's ``model:`` section builds, each encoder from ``assets`` (its rebuild arguments), each
    component on the meta device where it can be built there, else on the CPU (``built_on_meta``), as loading builds
    it (``rebuilding_saved``), what it warns of left unsaid: loading the model this is checked for warned of it."""
    with rebuilding_saved("<rebuilt>"), warnings.catch_warnings():
        warnings.simplefilter("ignore", SavedModelWarning)
        return build_model(model, assets, built_on_meta)


META_COPY = ".*copying from a non-meta parameter in the checkpoint to a meta parameter"
"""What torch warns of each weight a state dict gives a module on the meta device (a no-op), as a pattern."""


def built_on_meta(where: str, cls: type, *args: Any, **kwargs: Any) -> Any:
    """``cls(*args, **kwargs)``, a component of a recipe's model at ``where``, built on the meta device, where no
    weight is made; or, where building it there fails (a constructor that reads a value of a tensor it makes, which a
    meta tensor has none of: a ``RuntimeError`` or a ``TypeError``, which other faults raise too), that component
    alone built on the CPU, as loading builds it (``built``), which raises what is wrong with it. The CPU build draws
    its random weights from a fork of torch's CPU random state, so a save leaves later draws as they were.

    An encoder the saved model has is built from the arguments it was saved with, which read no weights; one of a
    kind the saved model lacks, from the recipe's own, so it may read its weights file, whose values its meta
    weights do not take: torch's warning of each (``META_COPY``) is left unsaid."""
    try:
        with torch.device("meta"), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=META_COPY, category=UserWarning)
            return cls(*args, **kwargs)
    except Exception:  # built again below, which raises a fault of the recipe's
        with torch.random.fork_rng(devices=[]):
            return built(where, cls, *args, **kwargs)


def shapes(model: WholePostModel) -> dict[str, tuple[int, ...]]:
    """Each weight's name in ``model``'s state dict → its shape."""
    return {name: tuple(value.shape) for name, value in model.state_dict().items()}


def weight_differences(recipe: dict[str, tuple[int, ...]], model: dict[str, tuple[int, ...]]) -> list[str]:
    """Each component whose weights differ between the model the recipe builds and the model (as ``shapes`` gives
    them), as ``"model.heads.hate (its first weight that differs and how)"``."""
    first: dict[str, str] = {}
    for name in sorted(recipe.keys() | model.keys()):
        if name not in model:
            difference = f"{name} in the recipe's model alone"
        elif name not in recipe:
            difference = f"{name} in this model alone"
        elif recipe[name] != model[name]:
            difference = f"{name} of shape {list(model[name])} in this model, {list(recipe[name])} in the recipe's"
        else:
            continue
        parts = name.split(".")
        first.setdefault(".".join(["model", *parts[: 2 if parts[0] in ("encoders", "heads") else 1]]), difference)
    return [f"{component} ({difference})" for component, difference in first.items()]


def installed_version(package: str) -> str | None:
    """The version of ``package`` as its installed metadata gives it (without importing it, which can take seconds);
    ``None`` where it is not installed (a model whose encoders need none of it)."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def write_files(artifact: Artifact, assets: dict[str, dict[str, Any]], staging: Path) -> None:
    """Write the files of ``artifact`` into the folder ``staging``, which holds what its encoders wrote there
    (``assets``: their rebuild arguments), the manifest last."""
    rebuild = {name: relative_paths(arguments, staging) for name, arguments in assets.items()}
    safetensors.torch.save_model(artifact.model, str(staging / WEIGHTS))
    umask_permissions(staging / WEIGHTS)
    (staging / RECIPE).write_text(artifact.recipe.to_yaml(), encoding="utf-8")
    manifest = {
        "format": FORMAT_VERSION,
        "faim_version": __version__,
        "torch_version": torch.__version__,
        "transformers_version": installed_version("transformers"),
        "tasks": [
            {"name": task.name, "type": task.type, "labels": list(task.labels)}
            | calibration_entry(artifact.calibration, task.name)
            | ({"pooled": calibration_entry(artifact.pooled, task.name)} if artifact.pooled else {})
            for task in artifact.tasks
        ],
        "element_kinds": artifact.model.kinds,
        "fused_kinds": artifact.model.fused_kinds,
        "embedding_dim": artifact.model.fusion.output_dim,
        "preprocessing": {"max_elements": artifact.max_elements, "pool_by_image": artifact.pool_by_image},
        "encoders": rebuild,
        "files": file_digests(staging),
    }
    (staging / MANIFEST).write_text(json.dumps(sealed(manifest), indent=2), encoding="utf-8")


def relative_paths(value: Any, staging: Path) -> Any:
    """An encoder's rebuild arguments with every path into the artifact written relative to it."""
    if isinstance(value, dict):
        return {key: relative_paths(item, staging) for key, item in value.items()}
    if isinstance(value, list):
        return [relative_paths(item, staging) for item in value]
    if isinstance(value, str) and Path(value).is_relative_to(staging):
        return Path(value).relative_to(staging).as_posix()
    return value


def rebuild_arguments(root: Path, manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each encoder's rebuild arguments as the manifest of the artifact at ``root`` holds them, every path in them
    made a file or folder of the artifact that the manifest lists (``inside``).

    Raises:
        ArtifactError: Naming the manifest, the argument and the path, when it names a path the manifest does not
            list (outside the artifact, or inside it but unlisted), which loading would read unchecked.
    """
    try:
        return {
            name: inside(args, root, manifest["files"], f"encoders.{name}")
            for name, args in manifest["encoders"].items()
        }
    except ValueError as error:
        raise ArtifactError(f"{root / MANIFEST}: {error}") from None


def inside(value: Any, root: Path, files: Mapping[str, str], field: str) -> Any:
    """Rebuild arguments read back, ``field`` their entry in the manifest (``encoders.text``): each string naming a
    path (``names_a_path``) becomes that file or folder of the artifact at ``root`` (``listed_path``); any other
    string (a name, such as torchvision's weights') is kept as it is.

    Raises:
        ValueError: Naming the argument (``encoders.text.weights``) and the path, as ``listed_path``.
    """
    if isinstance(value, dict):
        return {key: inside(item, root, files, f"{field}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [inside(item, root, files, f"{field}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, str) and names_a_path(value, root, files):
        return str(listed_path(root, files, field, value))
    return value


def names_a_path(value: str, root: Path, files: Mapping[str, str]) -> bool:
    """Whether a string of a saved model's rebuild arguments names a path: one leading outside the artifact on some
    system (absolute, with a drive, a ``..`` part or a leading ``~``, a backslash read as Windows reads it:
    ``faim.file_digests.portable``), which loading must not read, or one inside the artifact at ``root``: a file its
    manifest lists (``files``), a folder some listed file lies in, or anything else there. Any other string
    (torchvision's weights' name, a hub id, an empty prefix) is a setting, whatever the working directory holds."""
    inside = portable(value)
    if inside is None or value.startswith("~"):
        return True
    if inside == ".":
        return False
    listed = any(name == inside or name.startswith(f"{inside}/") for name in map(portable, files) if name)
    return listed or (root / inside).exists()


def listed_path(root: Path, files: Mapping[str, str], setting: str, name: str) -> Path:
    """The file or folder of the artifact at ``root`` that the rebuild argument ``setting`` names ``name``: a file its
    manifest lists (``faim.file_digests.listed_file``), or a folder inside it every file under which the manifest
    lists (a transformers encoder's config and tokenizer, which it reads from the folder by their names). Hidden files
    in the folder (``.DS_Store``, the ``._`` files macOS writes on shared drives) are passed over: no encoder reads
    them. The listing's names are written once (``faim.file_digests.file_finder``), however many files the folder
    holds.

    Raises:
        ValueError: As ``listed_file``, naming ``setting`` and ``name``, and for a folder the first file under it
            that the manifest does not list.
    """
    inside = portable(name)
    folder = root / inside if inside is not None else None
    find = file_finder(root, files)
    if folder is None or not folder.is_dir():
        return find(setting, name)
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts):
            find(f"{setting} {name!r}: file", path.relative_to(root).as_posix())
    return folder


def calibration_entry(calibration: Calibration, task: str) -> dict[str, float | None]:
    """A task's threshold (``None`` unless binary), temperature, logit shift, prior (``None`` until calibrated on
    labelled posts) and, where it has one, correction weight, as ``faim.json`` holds them."""
    weight = calibration.correction_weights.get(task)
    return {
        "threshold": calibration.thresholds.get(task),
        "temperature": calibration.temperatures[task],
        "logit_shift": calibration.logit_shifts[task],
        "prior": calibration.priors.get(task),
    } | ({} if weight is None else {"correction_weight": weight})


def read_calibration(entries: dict[str, dict[str, Any]]) -> Calibration:
    """The calibration in ``faim.json`` entries by task name (a logit shift absent from older artifacts is 0, a prior
    absent unknown, a correction weight absent none)."""
    return Calibration(
        {name: e["threshold"] for name, e in entries.items() if e["threshold"] is not None},
        {name: e["temperature"] for name, e in entries.items()},
        {name: e.get("logit_shift", 0.0) for name, e in entries.items()},
        {name: e["prior"] for name, e in entries.items() if e.get("prior") is not None},
        {name: e["correction_weight"] for name, e in entries.items() if "correction_weight" in e},
    )


def read_recipe(directory: str | Path) -> Recipe:
    """The recipe saved in an artifact, after checking the manifest's seal and the recipe file's hash (not the
    weights', which loading the model checks: a command reads its recipe, and its data, before the model); read as a
    saved model's (``rebuilding_saved``): an argument faim came to refuse since is warned of."""
    root = Path(directory)
    manifest = read_manifest(root)
    path = own_file(root, manifest, RECIPE)
    verify_files(root, manifest, only=path)
    with rebuilding_saved(str(root)):
        return Recipe.load(path)


def load_artifact(directory: str | Path) -> Artifact:
    """Load a saved model: verify hashes, rebuild the architecture from the recipe, load safetensors.

    Raises:
        TypeError: Naming the type of a ``directory`` that is no path (``None``, bytes).
        ValueError: For an empty ``directory`` (a variable not set), rather than read the working directory.
    """
    root = folder_given(directory, "a saved model's")
    manifest = read_manifest(root)
    verify_files(root, manifest)
    with manifest_entry(root, "tasks", MANIFEST, ArtifactError):
        tasks = [TaskSpec(t["name"], t["type"], task_labels(t)) for t in manifest["tasks"]]
    preprocessing = manifest["preprocessing"]
    with manifest_entry(root, "preprocessing", MANIFEST, ArtifactError):
        max_elements = setting(preprocessing, "max_elements", whole_number)
    overrides = rebuild_arguments(root, manifest)
    with rebuilding_saved(str(root)):
        recipe = Recipe.load(own_file(root, manifest, RECIPE))
        model = build_model(recipe.model, overrides)
    load_weights(model, own_file(root, manifest, WEIGHTS))
    model.eval()
    if [t.name for t in tasks] != [t.name for t in task_specs(recipe.model)]:
        raise ArtifactError(f"{root / MANIFEST}: tasks do not match {RECIPE}")
    pooling = any("pooled" in t for t in manifest["tasks"])
    return Artifact(
        model,
        tasks,
        read_calibration({t["name"]: t for t in manifest["tasks"]}),
        read_calibration({t["name"]: t["pooled"] for t in manifest["tasks"]}) if pooling else None,
        max_elements,
        # artifacts written before the preprocessing held it: the recipe's setting
        preprocessing.get("pool_by_image", recipe.eval.pool_by_image),
        recipe,
    )


def load_weights(model: WholePostModel, path: Path) -> None:
    """Load the safetensors file ``path`` into ``model`` (tensors alone: nothing is unpickled).

    Raises:
        ArtifactError: Naming ``path`` and the first weights the model holds in another shape (``reshaped``), or
            else the first it lacks or has besides.
    """
    misfit = reshaped(model, path)
    if not misfit:
        missing, unexpected = safetensors.torch.load_model(model, str(path), strict=False)
        misfit = f"missing {sorted(missing)[:5]}, unexpected {sorted(unexpected)[:5]}" if missing or unexpected else ""
    if misfit:
        raise ArtifactError(f"{path}: weights do not fit the recipe ({misfit})")


def reshaped(model: torch.nn.Module, path: Path) -> str:
    """The first five weights (in ``model``'s order) the safetensors file ``path`` holds in another shape than
    ``model`` does, as an error names them (``size mismatch for NAME: saved [8, 16], the model's [1, 16]``); ``""``
    where none is. Reads the file's header alone."""
    have = shapes(model)
    with safetensors.safe_open(str(path), framework="pt") as stored:
        saved = {name: tuple(stored.get_slice(name).get_shape()) for name in stored.keys()}
    differ = [name for name in have if name in saved and saved[name] != have[name]][:5]
    return "; ".join(
        f"size mismatch for {name}: saved {list(saved[name])}, the model's {list(have[name])}" for name in differ
    )
