"""How a recipe does on groups of posts it never saw: trained once per group, with that group's posts left out of its
training and validation splits alike (the ``without`` source), then measured on them as ``faim eval`` measures.

Where ``faim.eval.group_holdout`` probes a recipe's frozen embeddings with one logistic regression, this trains the
recipe itself, so its head, early stopping, temperature, logit shift, decision threshold and weight of the crowd's
corrections all come from the other groups alone. Each held-out group is scored by its own model, pooled by shared
picture among the group's posts where the recipe pools, under that model's calibration and threshold. The figures
over every held-out post together read each post's decision from its own model; AUROC and ECE compare calibrated
probabilities across models. One training per group: the 15 VMU events with pictures take about seven minutes for
``misinfo_vmu_multimodal`` on two cores, the embeddings cached.

    python -m faim.eval.trained_holdout recipes/misinfo_vmu_multimodal.yaml [--group-by event] [--runs DIR] [--reuse]
        [--measure-set require_image=false]

``--measure-set`` reads the posts measured under other data settings than those trained on: VMU's recipes train on
the posts with a local picture, and ``require_image=false`` measures every post of each event left out, the videos'
too. A group only that read holds (VMU's two events with videos alone) is measured by the recipe trained on all its
data, which never saw the group either (one more run, into ``<runs>/none_left_out``).
"""

from __future__ import annotations

import itertools
import re
import shutil
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import f1_score, roc_auc_score
from tqdm.auto import tqdm

from faim.assembly import task_specs
from faim.data.language import Told
from faim.data.post import LANGUAGE, Post
from faim.data.targets import TaskSpec
from faim.data.without import LANG_READING, grouped, left_out_digest
from faim.detector import Detector
from faim.eval.benchmark_runs import NOT_ASKED, reuse_problem, train_or_reuse
from faim.eval.calibration import expected_calibration_error
from faim.eval.evaluate import Evaluated, labelled
from faim.eval.group_holdout import cells, group_of, recipe_parser, recipe_task_and_groups
from faim.eval.slices import slice_name
from faim.eval.tables import markdown_cell
from faim.folders import NAME_BYTES, WINDOWS_DEVICES, names_apart
from faim.inference import predict
from faim.recipe import Recipe
from faim.recipe.loader import apply_overrides
from faim.training.loaders import make_loader
from faim.training.run import check_correction_groups, check_monitor_defined


@dataclass(frozen=True)
class HeldOut:
    """One group's labelled posts as the model trained without it scored them: ``targets`` (class index ``[n]``),
    calibrated ``probabilities`` (a binary task's of its positive class ``[n]``, else ``[n, C]``) and ``decisions``
    (class index ``[n]``: the model's threshold on a binary task, the arg-max otherwise)."""

    targets: np.ndarray
    probabilities: np.ndarray
    decisions: np.ndarray


@dataclass(frozen=True)
class TrainedHoldout:
    """``figures`` over every held-out post together and ``per_group`` (each ``figures``)."""

    overall: dict[str, float]
    per_group: dict[str, dict[str, float]]


def slug(value: object) -> str:
    """A folder name for a group's value: its ``device_slug``, a name Windows keeps for a device
    (``WINDOWS_DEVICES``) with ``_`` after it (``con_``, ``nul_.txt``)."""
    folder = device_slug(value)
    return WINDOWS_DEVICES.sub(r"\1_\2", folder) if WINDOWS_DEVICES.fullmatch(folder) else folder


def device_slug(value: object) -> str:
    """A group's value as ``slug`` names its folder, and as an earlier faim did even where Windows keeps the name
    for a device (``con``): its letters of any script (with the marks written on them: ``खेल``), digits, dots,
    hyphens and underscores, composed (NFC), each run of anything else written ``_``; without dots or ``_`` at either
    end, so that no group's folder is ``.`` or ``..``; ``group`` where nothing is left."""
    text = unicodedata.normalize("NFC", str(value))
    runs = itertools.groupby(
        text, key=lambda character: unicodedata.category(character)[0] in "LMN" or character in "._-"
    )
    return "".join("".join(run) if kept else "_" for kept, run in runs).strip("._") or "group"


def with_data(recipe: Recipe, data: dict[str, Any]) -> Recipe:
    """``recipe`` reading ``data`` instead of its own data section."""
    return Recipe.from_dict(recipe.to_dict() | {"data": data}, recipe.source)


def with_output(recipe: Recipe, output_dir: Path) -> Recipe:
    """``recipe`` trained into ``output_dir``."""
    mapping = recipe.to_dict()
    mapping["train"] = mapping["train"] | {"output_dir": str(output_dir)}
    return Recipe.from_dict(mapping, recipe.source)


def fold_recipe(
    recipe: Recipe, group_by: str, folder: str, values: list[object], runs: Path, left: dict[str, list[Post]]
) -> Recipe:
    """``recipe`` with the posts whose ``meta[group_by]`` is one of ``values`` (a group: every value that reads as it,
    such as ``1`` from a CSV and ``"1"`` from JSON) left out of its data, trained into ``runs/<folder>`` (the group's
    ``run_folders``); of ``lang``, its source says it reads the values as language codes (``read_lang``), which an
    earlier faim's fold, comparing them as given, did not, and which posts it leaves out (``left_out``: the
    ``faim.data.without.left_out_digest`` of ``left``, by split), so that ``--reuse`` trains such a fold
    again, and one whose posts faim now reads the language of otherwise (a post's own code or its text's)."""
    data = {"type": "without", "source": recipe.data_section, "field": group_by, "values": values}
    if group_by == LANGUAGE:
        data |= {"read_lang": LANG_READING, "left_out": left_out_digest(left)}
    return with_output(with_data(recipe, data), runs / folder)


def run_folders(groups: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Each group's run folder: its ``slug``, and where an earlier group's folder or one of ``taken`` is already that,
    or that in another case (``Sport`` beside ``sport``: one folder where file names are told apart regardless of case,
    as on macOS and Windows; ``a b`` beside ``a_b``), a number after it that no group's own slug is, so that the
    folders of the groups holding their slug alone stay as they were (``--reuse`` finds them; ``names_apart``); a slug
    too long for a folder's name (``NAME_BYTES``) is cut short."""
    return names_apart({group: slug(group) for group in groups}, taken)


def earlier_folders(group: str, runs: Path) -> list[str]:
    """The folders of ``runs`` an earlier faim may have trained ``group``'s fold into: its slug of ASCII letters alone
    (``café``: ``caf``), as faim named folders before ``slug`` kept letters of any script; its ``slug`` unnumbered
    (``sport``), as groups whose folders differ in case alone had folders of their own on Linux before
    ``run_folders`` numbered them; and its ``slug`` numbered (``sport-3``), as ``run_folders`` numbered it beside other
    groups than these; and its ``device_slug`` unnumbered and numbered (``con``, ``con-2``, ``lpt²``), as faim named
    the folder of a name Windows keeps for a device before ``slug`` gave it a ``_``."""
    ascii_slug = re.sub(r"[^A-Za-z0-9._-]+", "_", group).strip("_") or "group"
    slugs = dict.fromkeys([slug(group), device_slug(group)])
    numbered = re.compile(rf"({'|'.join(map(re.escape, slugs))})-\d+")
    found = sorted(entry.name for entry in runs.iterdir() if numbered.fullmatch(entry.name)) if runs.is_dir() else []
    earlier = dict.fromkeys([ascii_slug, *slugs, *found])
    return [folder for folder in earlier if folder not in (".", "..") and len(folder.encode()) <= NAME_BYTES]


def earlier_run(fold: Recipe, group: str, folders: Iterable[Path]) -> tuple[Recipe, str | None]:
    """``fold``, or, where its folder holds no run ``--reuse`` takes for it (``reuse_problem``) and a folder an
    earlier faim may have trained it into (``earlier_folders``) does, ``fold`` trained there, so that ``--reuse``
    takes that run; only a run of the very recipe, leaving out the same values, is taken, and never from a folder that
    is one of ``folders`` (every fold's own now), into which another group's fold may train. With what
    ``reuse_problem`` says of the run returned, which ``train_or_reuse`` is given so as not to ask again."""
    output_dir = Path(fold.train.output_dir)
    problem = reuse_problem(fold)
    if problem is None:
        return fold, None
    own = [folder for folder in folders if folder.exists()]
    for name in earlier_folders(group, output_dir.parent):
        earlier = output_dir.parent / name
        if earlier in folders or (earlier.exists() and any(earlier.samefile(folder) for folder in own)):
            continue  # one fold's folder now (Sport's, where sport was on macOS)
        trained_there = with_output(fold, earlier)
        if reuse_problem(trained_there) is None:
            return trained_there, None
    return fold, problem


def split_posts(recipe: Recipe) -> dict[str, list[Post]]:
    """Every post of the recipe's train and evaluation splits (never a test split it does not evaluate), by split.

    Raises:
        ValueError: When the source has no such split, naming the splits it has.
    """
    source = recipe.data_source()
    names = list(dict.fromkeys(("train", recipe.eval.split)))
    missing = [name for name in names if name not in source.splits()]
    if missing:
        raise ValueError(f"{recipe.source}: no {' or '.join(missing)} split; found: {', '.join(source.splits())}")
    return {name: source.posts(name) for name in names}


def posts_by_group(
    splits: dict[str, list[Post]], task: TaskSpec, group_by: str, keyed: dict[str, list[Post]] | None = None
) -> dict[str, list[Post]]:
    """The posts of ``splits`` labelled for ``task``, by ``meta[group_by]`` read as a string (``slice_name``, as
    ``faim eval`` names its slices), groups in sorted order; grouped by ``lang``, a post's language is the one
    evaluation gives it (``faim.data.without.grouped``: its own code, or the one its text is written in), read from
    ``keyed`` (the posts of ``splits`` so grouped) where the caller has them, so that no text is told twice.

    Raises:
        ValueError: When a labelled post has no ``meta[group_by]``, naming it; with fewer than two groups.
    """
    keyed = {split: grouped(posts, group_by) for split, posts in splits.items()} if keyed is None else keyed
    groups: dict[str, list[Post]] = {}
    for split, posts in splits.items():
        for post, read in zip(posts, keyed[split]):
            if post.labels.get(task.name) is not None:
                groups.setdefault(slice_name(group_of(read, group_by)), []).append(post)
    if len(groups) < 2:
        raise ValueError(f"leaving one group out needs at least two values of meta.{group_by}, found {len(groups)}")
    return dict(sorted(groups.items()))


def held_out(recipe: Recipe, model_dir: Path, task: TaskSpec, posts: list[Post]) -> HeldOut:
    """The saved model's scores of a held-out group's ``posts``, as its evaluation scores them: pooled by shared picture
    among these posts (with the crowd's corrections, where its pooled calibration weighs them) when it pools."""
    detector = Detector.load(model_dir)
    cache_dir = recipe.train.cache_dir if recipe.train.cache_embeddings else None
    collate = detector.collator(with_targets=True)
    loader = make_loader(detector.model, collate, posts, recipe.eval.batch_size, shuffle=False, cache_dir=cache_dir)
    predictions = predict(detector.model, loader, desc=None, link_kind=detector.pooling_kind)
    evaluated = Evaluated.of(detector, predictions)
    keep = task.labelled(predictions.targets[task.name])
    y, prob = labelled(task, evaluated, keep)
    if task.type == "binary":
        decisions = (prob >= evaluated.calibration.thresholds[task.name]).astype(np.int64)
    else:
        decisions = prob.argmax(axis=1)
    return HeldOut(y, prob, decisions)


def figures(task: TaskSpec, scored: Sequence[HeldOut], bins: int) -> dict[str, float]:
    """``accuracy`` and ``macro_f1`` of the decisions, ``auroc`` of the probabilities (binary: of the positive class;
    multiclass: mean one-vs-rest; NaN unless every class is present and absent somewhere), ``ece`` (binary: of the
    positive class; multiclass: of the arg-max) and ``n``, over the posts of ``scored`` together."""
    y = np.concatenate([s.targets for s in scored])
    prob = np.concatenate([s.probabilities for s in scored])
    decisions = np.concatenate([s.decisions for s in scored])
    classes = list(range(len(task.labels)))
    present = np.bincount(y, minlength=len(classes))
    ranked = bool(np.all((present > 0) & (present < len(y))))
    if task.type == "binary":
        auroc = roc_auc_score(y, prob) if ranked else np.nan
        ece = expected_calibration_error(prob, y, bins)
    else:
        auroc = np.mean([roc_auc_score(y == c, prob[:, c]) for c in classes]) if ranked else np.nan
        ece = expected_calibration_error(prob.max(axis=1), prob.argmax(axis=1) == y, bins)
    return {
        "accuracy": float(np.mean(decisions == y)),
        "macro_f1": float(f1_score(y, decisions, labels=classes, average="macro", zero_division=0)),
        "auroc": float(auroc),
        "ece": float(ece),
        "n": len(y),
    }


@dataclass(frozen=True)
class Fold:
    """One group left out: the ``recipe`` trained without it and its labelled ``posts``, measured by that model."""

    recipe: Recipe
    posts: list[Post]


NONE_LEFT_OUT = "none_left_out"
"""The run folder of the recipe trained on all its data, which measures the groups only ``measured`` posts hold."""


def plan_folds(
    recipe: Recipe,
    task: TaskSpec,
    group_by: str,
    runs: Path | None = None,
    measured: dict[str, Any] | None = None,
) -> dict[str, Fold]:
    """One ``Fold`` per group of ``posts_by_group``, trained into ``runs/<folder>`` (``run_folders``; default:
    ``<train.output_dir>/without``), each checked before any trains, on the posts read once.

    Args:
        measured: The data section whose posts are measured (default: the recipe's own), such as the recipe's with
            VMU's ``require_image: false``, to measure also the posts its training leaves out. Its groups are the
            folds; a group the recipe's own data does not hold is measured by the recipe trained on all of it, in
            ``runs/none_left_out``.

    Raises:
        ValueError: As ``split_posts`` and ``posts_by_group`` (of the recipe's data and of ``measured``); for a task
            that is not binary or multiclass; when leaving a group out
            leaves the recipe no training or evaluation post, a validation split on which the task's AUROC
            ``train.monitor`` names is undefined (``faim.training.run.check_monitor_defined``), or (with
            ``eval.crowd_corrections``) training posts of one crowd group only; naming the group.
    """
    if task.type not in ("binary", "multiclass"):
        raise ValueError(f"task {task.name!r} is {task.type}; this measures one class per post")
    splits = split_posts(recipe)
    told: Told = {}  # the languages told of the posts trained on, which those measured are read from
    keyed = {split: grouped(every, group_by, told) for split, every in splits.items()}  # as the fold's source does
    trained_groups = posts_by_group(splits, task, group_by, keyed)
    groups = trained_groups
    if measured is not None:
        read = split_posts(with_data(recipe, measured))
        read_keyed = {split: grouped(every, group_by, told) for split, every in read.items()}
        groups = posts_by_group(read, task, group_by, read_keyed)
    folders = run_folders(groups, [NONE_LEFT_OUT] if set(groups) - set(trained_groups) else [])
    runs = Path(recipe.train.output_dir) / "without" if runs is None else runs
    folds = {}
    for name, posts in groups.items():
        if name not in trained_groups:
            folds[name] = Fold(with_output(recipe, runs / NONE_LEFT_OUT), posts)
            continue
        inside = {split: [slice_name(post.meta.get(group_by)) == name for post in keyed[split]] for split in splits}
        members = (post for split, every in keyed.items() for post, held in zip(every, inside[split]) if held)
        values = list({repr(post.meta[group_by]): post.meta[group_by] for post in members}.values())
        left = {split: [post for post, held in zip(every, inside[split]) if held] for split, every in splits.items()}
        fold = fold_recipe(recipe, group_by, folders[name], values, runs, left)  # leaves out the posts inside
        for split, held in inside.items():
            if all(held):
                raise ValueError(f"leaving out {group_by} {name!r} leaves {recipe.source} no {split} post")
        if "validation" in splits:  # the split training validates (and stops early) on, as training checks it
            kept = [post for post, held in zip(splits["validation"], inside["validation"]) if not held]
            try:
                check_monitor_defined(fold, task_specs(fold.model), kept, "the validation split")
            except ValueError as error:
                raise ValueError(f"leaving out {group_by} {name!r}: {error}") from None
        if fold.eval.crowd_corrections:
            kept = [post for post, held in zip(splits["train"], inside["train"]) if not held]
            try:
                check_correction_groups(fold, kept)
            except ValueError as error:
                raise ValueError(f"leaving out {group_by} {name!r}: {error}") from None
        folds[name] = Fold(fold, posts)
    return folds


def trained_holdout(
    folds: dict[str, Fold],
    task: TaskSpec,
    reuse: bool = False,
    log: Callable[[str], None] = print,
    progress: Callable = tqdm,
    trained: dict[str, Path] | None = None,
) -> TrainedHoldout:
    """Train each fold of ``plan_folds`` and measure its model on the group it left out (see the module docstring);
    with ``reuse``, a run already there of the same recipe, or in the folder an earlier faim trained it into
    (``earlier_run``), is evaluated instead of trained again. Each run's
    checkpoints are removed once its model is saved (hundreds of MB each with a large frozen encoder); the model
    stays; a run several groups share (``NONE_LEFT_OUT``) trains once.

    Args:
        trained: Model folders by run folder of the runs already trained (or reused) here, which are measured
            without training or evaluating them again; filled in with the runs this call trains, so that measuring
            the same folds on other posts (``plan_folds(measured=...)``) can pass it on.
    """
    scored: dict[str, HeldOut] = {}
    trained = {} if trained is None else trained
    folders = {Path(fold.recipe.train.output_dir) for fold in folds.values()}
    for name, fold in progress(folds.items(), desc="training without each group", unit="group"):
        output_dir = Path(fold.recipe.train.output_dir)
        field = fold.recipe.data_section.get("field")
        left_out = "nothing (no post of it trained on)" if output_dir.name == NONE_LEFT_OUT else f"{field} {name!r}"
        log(f"without {left_out} ({len(fold.posts)} labelled posts held out)")
        if str(output_dir) not in trained:
            earlier = reuse and output_dir.name != NONE_LEFT_OUT  # none_left_out has no earlier folder
            run, problem = earlier_run(fold.recipe, name, folders) if earlier else (fold.recipe, NOT_ASKED)
            trained[str(output_dir)] = train_or_reuse(run, reuse, log, problem).model_dir
            shutil.rmtree(Path(run.train.output_dir) / "checkpoints", ignore_errors=True)  # the model stays
        scored[name] = held_out(fold.recipe, trained[str(output_dir)], task, fold.posts)
    bins = next(iter(folds.values())).recipe.eval.calibration_bins
    return TrainedHoldout(
        figures(task, list(scored.values()), bins) | {"groups": len(scored)},
        {name: figures(task, [one], bins) for name, one in scored.items()},
    )


COLUMNS = ("accuracy", "macro_f1", "auroc", "ece")


def format_result(result: TrainedHoldout, group_by: str) -> str:
    """Markdown tables: every held-out post together, then each held-out group, named as a table's cell shows it
    (``markdown_cell``)."""
    names = " | ".join(COLUMNS)
    overall = result.overall
    lines = [
        f"| {group_by}s held out | n | {names} |",
        "|---:|---:|" + "---:|" * len(COLUMNS),
        f"| {overall['groups']} | {overall['n']} | {cells(overall, COLUMNS)} |",
        "",
        f"| held-out {group_by} | n | {names} |",
        "|:---|---:|" + "---:|" * len(COLUMNS),
    ]
    lines += [f"| {markdown_cell(name)} | {m['n']} | {cells(m, COLUMNS)} |" for name, m in result.per_group.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = recipe_parser("trained_holdout", __doc__, "measure")
    parser.add_argument("--runs", type=Path, help="where each group's run goes (default: <train.output_dir>/without)")
    parser.add_argument("--reuse", action="store_true", help="evaluate a run already there instead of training again")
    parser.add_argument(
        "--measure-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a data setting for the posts measured, not those trained on (repeatable; a key of the recipe's data "
        "section, dotted for a nested one such as source.require_image, the value read as YAML): require_image=false "
        "measures every VMU post, also those without a local picture; a group the posts measured lack is not measured",
    )
    args = parser.parse_args(argv)
    recipe, task, group_by = recipe_task_and_groups(parser, args)
    for setting in args.measure_set:
        if "=" not in setting or not setting.partition("=")[0].strip():
            parser.error(f"--measure-set {setting!r}: expected KEY=VALUE, such as require_image=false")
    try:
        measured = apply_overrides(recipe.data_section, args.measure_set) if args.measure_set else None
        folds = plan_folds(recipe, task, group_by, args.runs, measured)
    except ValueError as error:  # a post without a group, too few groups, no post left to train or validate on
        parser.error(str(error))
    result = trained_holdout(folds, task, args.reuse)
    print(f"recipe: {recipe.source}  task: {task.name}  trained without each meta.{group_by} in turn")
    print(format_result(result, group_by))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
