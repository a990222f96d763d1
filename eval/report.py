"""Evaluation reports: ``metrics.json``, ``metrics.md`` and the console table the CLI prints.

The ``results`` dict every function here takes (``faim eval`` builds it)::

    {
        "model": "runs/memes-clip",                 # model artifact path or name
        "data": "data/hateful_memes/dev.jsonl",     # evaluated data
        "split": "dev",
        "pooled_by_image": 0.95,                    # optional: the cosine a model that pools posts by shared
                                                    #   picture links them at; its figures are of pooled posts
        "tasks": {
            "hate": {                               # task name, as in the recipe's heads
                "type": "binary",                   # "binary" | "multiclass" | "multilabel"
                "metrics": {"auroc": 0.81, ...},    # flat dict from faim.eval.metrics
                "slices": {                         # optional: faim.eval.slices.slice_metrics
                    "news": {"n": 412, "auroc": 0.83, ...},
                    "sports": {"n": 12},            # below the minimum size: n only
                },
                "languages": {                      # optional: the same, per language (meta.lang)
                    "en": {"n": 902, "auroc": 0.84, ...},
                    "es": {"n": 98, "auroc": 0.71, ...},
                },
                "ablations": {                      # optional: same metrics with a modality masked
                    "without_image": {"auroc": 0.74, ...},
                    "without_text": {"auroc": 0.61, ...},
                },
                "one_class": "benign",              # optional, binary tasks: the label every labelled post
                                                    #   carries, where all carry one (AUROC and AP unmeasured)
                "absent": ["threat"],               # optional, multiclass tasks: the labels no labelled post
                                                    #   carries (macro AUROC unmeasured)
                "terms": {                          # optional, binary tasks: words the model's decisions and
                    "terms": 12, ...                #   the labels read the opposite way
                },                                  #   (faim.eval.label_conflicts.decision_conflicts)
                "plots": ["out/hate_roc.png", ...], # optional: from faim.eval.plots
            },
        },
    }

Metric values are floats or ints; NaN marks an undefined metric, written as ``null`` in JSON and
``n/a`` in tables. Plot paths are linked relative to the report folder.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal, NotRequired, TypedDict

from faim.eval.label_conflicts import decision_conflicts_note
from faim.eval.slices import MIN_SIZE
from faim.eval.tables import (
    MISSING,
    code_span,
    format_ece_range,
    format_value,
    left_to_right,
    markdown_image,
    markdown_name,
    markdown_table,
    markdown_text,
    text_table,
    with_change,
)
from faim.folders import WRITTEN, compared, write_text_whole
from faim.notices import warn
from faim.wording import plural

TaskType = Literal["binary", "multiclass", "multilabel"]

HEADLINE: dict[str, tuple[str, ...]] = {
    "binary": ("auroc", "average_precision", "f1", "macro_f1", "ece", "n"),
    "multiclass": ("accuracy", "macro_f1", "macro_auroc", "ece", "n"),
    "multilabel": ("macro_auroc", "macro_average_precision", "macro_f1", "n"),
}
"""Metrics shown in the console table, the slices table and the ablation table, per task type."""

UNMEASURED = "—"
"""A slices table's cell for a figure not measured on a slice too small for it to be more than noise (``n/a`` is
one nothing measures)."""


class _TaskRequired(TypedDict):
    type: TaskType
    metrics: dict[str, float]


class TaskResult(_TaskRequired, total=False):
    """One task's results; ``slices``, ``languages``, ``ablations``, ``one_class``, ``absent``, ``terms`` and
    ``plots`` are optional."""

    one_class: str
    absent: list[str]
    slices: dict[str, dict[str, float]]
    languages: dict[str, dict[str, float]]
    ablations: dict[str, dict[str, float]]
    terms: dict[str, Any]
    plots: Sequence[str | os.PathLike[str]]


class Results(TypedDict):
    """Everything one evaluation run reports; see the module docstring."""

    model: str
    data: str
    split: str
    pooled_by_image: NotRequired[float | None]
    tasks: dict[str, TaskResult]


REPORT_FILES = {"json": "metrics.json", "markdown": "metrics.md"}
"""The files ``write_report`` writes, by the key it returns each under."""

WRITER = "faim eval"
"""What the record of an evaluation's folder (``WRITTEN``) names as its writer, under ``"writer"``: a file of that
name naming none, or another (``faim calibrate``'s report, written into the same folder), is another's, whose files an
evaluation never removes (``recorded``)."""


def write_report(results: Results, out_dir: Path) -> dict[str, Path]:
    """Write ``metrics.json`` (NaN as ``null``) and ``metrics.md`` into ``out_dir``.

    The Markdown has, per task, a metrics table (and under it, where a task's labelled posts are too few classes to
    measure its AUROC, why it reads n/a: ``_one_class_text``), an ablation table (headline metrics of
    the full model and of each ablation, with the change from the full model), a slices and a languages table when
    present, the words the model and the labels read the opposite way when there are any, then the task's images.

    Returns:
        ``{"json": path, "markdown": path}``.

    Raises:
        ValueError: if ``results`` lacks a required key or names an unknown task type.
    """
    _check_results(results)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / REPORT_FILES["json"], out_dir / REPORT_FILES["markdown"]
    write_text_whole(json_path, json_text(results))  # a write stopped part way leaves the earlier file, not part
    write_text_whole(md_path, _markdown(results, out_dir))
    return {"json": json_path, "markdown": md_path}


def written_files(results: Results, out_dir: Path) -> list[str]:
    """The files an evaluation writes into ``out_dir`` for ``results``, as ``replace_written`` takes them (relative to
    ``out_dir``, with ``/``): ``metrics.json`` and ``metrics.md`` (``write_report``), each task's plots and the record
    of them (``WRITTEN``)."""
    plots = [plot for task in results["tasks"].values() for plot in task.get("plots", [])]
    return [*REPORT_FILES.values(), *(Path(plot).relative_to(out_dir).as_posix() for plot in plots), WRITTEN]


def replace_written(folder: Path, written: Iterable[str], writer: str = WRITER) -> bool:
    """Remove the files of ``folder`` that its record (``WRITTEN``) says an earlier run wrote and that are not among
    ``written`` (this run's, as paths relative to ``folder`` with ``/``), and the folders of them left empty, then
    record ``written``, made where it is missing, as a whole file or none. With nothing written, no record is left
    (nor made, nor ``folder``). An earlier record of a folder inside (``robustness/written.json``)
    that this run did not write again takes the files it lists with it. Only what the record names inside ``folder``
    is removed (an entry leading out of it, by ``..``, from the root or through a link inside it, is passed over), and
    ``folder`` itself stays, a link to another folder too, as does an entry naming a file this run wrote (an earlier
    ``Hate_roc.png`` where this run wrote ``hate_roc.png``: one file on macOS and Windows; ``identity``, or where the
    file system gives no file index, a name ``faim.folders.compared`` reads as one of this run's). A
    ``WRITTEN`` there that is not a record ``writer`` wrote (``recorded``) is left as it is, no file it lists is
    removed, and this run's files go unrecorded, with a warning.

    Returns:
        Whether ``folder``'s record was ``writer``'s, or there was none (false where another's was left as it is).
    """
    written, earlier = sorted(set(written)), recorded(folder, writer)
    if earlier is None:
        warn(
            f'{folder / WRITTEN}: is not a record {writer} wrote (no "writer": "{writer}" in it), so it is left as '
            "it is, no file it lists is removed, and this run's files there go unrecorded (a later run removes none "
            f"it does not write again); move it away, or write elsewhere, to have {writer} record them"
        )
        return False
    this_run = {identity(folder.joinpath(*PurePosixPath(entry).parts)) for entry in written} - {None}
    this_run_names = {compared(entry) for entry in written}
    for entry in sorted(set(earlier) - set(written)):
        path = PurePosixPath(entry)
        if path.is_absolute() or ".." in path.parts or not path.parts:
            continue
        stale = folder.joinpath(*path.parts)
        if not stale.parent.resolve().is_relative_to(folder.resolve()):  # through a link inside to another folder
            continue
        if stale.name == WRITTEN and len(path.parts) > 1 and not replace_written(stale.parent, [], writer):
            continue  # another's record, left as it is
        known = identity(stale)
        kept = known in this_run if known else compared(entry) in this_run_names  # no file index: by name
        if stale.is_file() and not stale.is_symlink() and not kept:  # a link is another's
            stale.unlink()
        for parent in list(stale.parents)[: len(path.parts) - 1]:
            with contextlib.suppress(OSError):  # not empty (a file of another's), or gone already
                parent.rmdir()
    if not written:  # nothing to record
        (folder / WRITTEN).unlink(missing_ok=True)
        return True
    folder.mkdir(parents=True, exist_ok=True)
    write_text_whole(folder / WRITTEN, json.dumps({"writer": writer, "files": written}, indent=2) + "\n")
    return True


def identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` names (its device and inode), ``None`` where there is none, or where the file system gives
    no inode (``st_ino`` 0, as on Windows network shares, where every file would read as one): two names of one file,
    as ``Hate_roc.png`` and ``hate_roc.png`` are where file names are told apart regardless of case (macOS, Windows),
    are one."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if found.st_ino else None


def recorded(folder: Path, writer: str = WRITER) -> list[str] | None:
    """The files ``folder``'s record (``WRITTEN``) lists: none where there is no file of that name; ``None`` where
    the file there is not a record ``writer`` wrote, one naming it as its writer and its files as a list (a user's
    own file of that name, one that does not read as JSON, another writer's record, or the record of a faim before
    records named their writer, which cannot be told from a user's).
    """
    path = folder / WRITTEN
    if not path.exists() and not path.is_symlink():
        return []
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("writer") != writer or not isinstance(record.get("files"), list):
        return None
    return [entry for entry in record["files"] if isinstance(entry, str)]


def format_table(results: Results) -> str:
    """Plain-text console summary: per task, a row of headline metrics for the full model and each ablation, then
    why AUROC reads n/a where its labelled posts are too few classes to measure it (``_one_class_text``), how
    its ECE compares with a calibrated model's and the words it and the labels read the opposite way.

    Raises:
        ValueError: as :func:`write_report`.
    """
    _check_results(results)
    blocks = [f"model: {results['model']}  data: {results['data']}  split: {results['split']}{_pooling_note(results)}"]
    for name, task in results["tasks"].items():
        columns = HEADLINE[task["type"]]
        variants = {"full": task["metrics"], **task.get("ablations", {})}
        rows = [[variant, *(format_value(m.get(c)) for c in columns)] for variant, m in variants.items()]
        blocks.append(
            f"{name} ({task['type']})\n"
            + text_table(["variant", *columns], rows)
            + _one_class_note(task)
            + _ece_note(task["metrics"])
            + _terms_note(task)
        )
    return "\n\n".join(blocks)


def _ece_note(metrics: Mapping[str, float]) -> str:
    """A line putting the ECE next to the range a calibrated model would show (empty without one)."""
    if "ece_if_calibrated_low" not in metrics or "ece" not in metrics:
        return ""
    ece = format_value(metrics["ece"])
    return f"\nECE {ece}: a calibrated model would show {format_ece_range(metrics)} on these posts"


def _one_class_text(task: TaskResult) -> str | None:
    """A sentence on why a task reads n/a for the figures that need posts of more than one class, naming the posts:
    a binary task whose labelled posts are all of one class (``one_class``, named) for AUROC and average precision, a
    multiclass task some of whose classes no labelled post is of (``absent``, named) for macro AUROC, and that its
    macro-F1 counts their F1 as 0, a multilabel task each of whose labels its labelled posts all carry or all lack for
    macro AUROC and average precision, and one some of whose labels they do, or no post is labelled for (named apart:
    ``_unmeasured_posts``), for those labels' figures, which its macro figures leave out; ``None`` for another task."""
    metrics, also = task["metrics"], ""
    counted = f"({plural(int(metrics['n']), 'post')})"
    if (label := task.get("one_class")) is not None:
        posts, unmeasured = (
            f"every labelled post is {label!r} {counted}",
            "AUROC and average precision, which need posts of both classes, read",
        )
    elif absent := task.get("absent"):
        posts, unmeasured = (
            f"no labelled post is {' or '.join(map(repr, absent))} {counted}",
            "macro AUROC, which needs posts of every class, reads",
        )
        also = f", and macro-F1 counts {'its' if len(absent) == 1 else 'their'} F1 as 0"
    elif task["type"] == "multilabel" and (alone := _unmeasured_labels(metrics)):
        every = format_value(metrics.get("macro_auroc", 0.0)) == MISSING
        if every and all(metrics[f"n/{label}"] for label in alone):
            posts = f"each label's labelled posts all carry it or all lack it {counted}"
        else:
            posts = _unmeasured_posts(metrics, alone)
        unmeasured = (
            "macro AUROC and macro average precision, which need posts with and without a label, read"
            if every
            else "macro AUROC and macro average precision are of the other labels alone, as "
            f"{'its' if len(alone) == 1 else 'their'} AUROC and average precision read"
        )
    else:
        return None
    return f"{posts}, so {unmeasured} n/a{also}"


def _unmeasured_posts(metrics: Mapping[str, float], alone: list[str]) -> str:
    """What a multilabel task's posts are of its labels ``alone`` whose AUROC reads n/a: those its labelled posts all
    carry or all lack, with how many posts are labelled for each (``n/<label>``), and those no post is labelled for."""
    labelled = {label: int(metrics[f"n/{label}"]) for label in alone}
    held = [label for label in alone if labelled[label]]
    said = []
    if held:
        counts = {labelled[label] for label in held}
        named = (
            f"{' and '.join(map(repr, held))} ({plural(counts.pop(), 'post')})"
            if len(counts) == 1
            else " and ".join(f"{label!r} ({plural(labelled[label], 'post')})" for label in held)
        )
        said.append(f"the labelled posts all carry or all lack {named}")
    if unlabelled := [label for label in alone if not labelled[label]]:
        said.append(f"no post is labelled for {' or '.join(map(repr, unlabelled))}")
    return ", and ".join(said)


def _unmeasured_labels(metrics: Mapping[str, float]) -> list[str]:
    """The labels of a multilabel task whose AUROC reads n/a (``auroc/<label>``), which its macro figures leave out."""
    return [
        key.removeprefix("auroc/")
        for key, value in metrics.items()
        if key.startswith("auroc/") and format_value(value) == MISSING
    ]


def _one_class_note(task: TaskResult) -> str:
    """``_one_class_text`` as a line under the task's console table (empty for another task)."""
    note = _one_class_text(task)
    return f"\n{note}" if note else ""


def _pooling_note(results: Results) -> str:
    """A line saying the figures are of posts pooled by shared picture, for a model that pools them (empty for one
    that scores each post on its own)."""
    min_cosine = results.get("pooled_by_image")
    if min_cosine is None:
        return ""
    return (
        f"\nmeasured on posts pooled by shared picture (eval.pool_by_image {min_cosine}), as the model scores them; "
        "without_pooling measures each post on its own, as faim calibrate does"
    )


def _terms_note(task: TaskResult) -> str:
    """A line on the words the model and the labels read the opposite way (empty without any)."""
    note = decision_conflicts_note(task.get("terms"))
    return f"\n{note}" if note else ""


def _markdown(results: Results, out_dir: Path) -> str:
    """Render the Markdown report."""
    parts = [
        "# Evaluation report",
        "\n".join(f"- {key}: {left_to_right(code_span(str(results[key])))}" for key in ("model", "data", "split"))
        + _pooling_note(results).replace("\n", "\n- "),
    ]
    for name, task in results["tasks"].items():
        headline = [c for c in HEADLINE[task["type"]] if c != "n"]
        parts.append(f"## {markdown_text(name)} ({task['type']})")
        parts.append(markdown_table(["metric", "value"], [[k, format_value(v)] for k, v in task["metrics"].items()]))
        if note := _one_class_text(task):
            parts.append(markdown_text(note))  # naming the task's label
        if task.get("ablations"):
            parts.append("### Ablations")
            parts.append(_ablation_table(task["metrics"], task["ablations"], headline))
        for key, title, column in (("slices", "Slices", "slice"), ("languages", "Languages", "language")):
            if task.get(key):
                parts.append(f"### {title}")
                parts.append(_slice_table(task[key], headline, column))
        note = decision_conflicts_note(task.get("terms"), markdown_name)
        if note:
            parts.append("### Words the model and the labels read the opposite way")
            parts.append(left_to_right(note))  # its words and the task's positive label as written
        if task.get("plots"):
            parts.append("### Plots")
            parts.append("\n\n".join(markdown_image(Path(p).name, _link(p, out_dir)) for p in task["plots"]))
    return "\n\n".join(parts) + "\n"


def _slice_table(slices: Mapping[str, Mapping[str, float]], headline: list[str], column: str) -> str:
    """One row per slice: its size and the headline metrics it reports; a slice too small to be measured (its size
    alone, ``faim.eval.slices.slice_metrics``) reads ``UNMEASURED`` in each, which a note under the table says."""
    columns = [c for c in headline if any(c in m for m in slices.values())]
    rows = [[value, format_value(m.get("n")), *(_slice_cell(m, c) for c in columns)] for value, m in slices.items()]
    table = markdown_table([column, "n", *columns], rows)
    if columns and any(_unmeasured(m) for m in slices.values()):  # a cell reads UNMEASURED
        table += (
            f"\n\n{UNMEASURED}: not measured, on a slice of fewer than {MIN_SIZE} posts (its figures would be noise)"
        )
    return table


def _slice_cell(metrics: Mapping[str, float], metric: str) -> str:
    """A slice's ``metric`` as a table cell: ``UNMEASURED`` on a slice too small to be measured, else its value."""
    return UNMEASURED if _unmeasured(metrics) else format_value(metrics.get(metric))


def _unmeasured(metrics: Mapping[str, float]) -> bool:
    """Whether a slice reports its size alone: too small for ``slice_metrics`` to measure it."""
    return set(metrics) <= {"n"}


def _ablation_table(full: Mapping[str, float], ablations: Mapping[str, Mapping[str, float]], columns: list[str]) -> str:
    """Headline metrics (rows) of the full model and each ablation (columns), ablations with their change."""
    rows = []
    for metric in columns:
        row = [metric, format_value(full.get(metric))]
        for values in ablations.values():
            row.append(with_change(format_value(values.get(metric)), _difference(values.get(metric), full.get(metric))))
        rows.append(row)
    return markdown_table(["metric", "full", *ablations], rows)


def _difference(value: Any, reference: Any) -> float | None:
    """``value - reference`` when both are finite numbers, else None."""
    numbers = [v for v in (value, reference) if isinstance(v, (int, float)) and math.isfinite(v)]
    return value - reference if len(numbers) == 2 else None


def _link(path: str | os.PathLike[str], out_dir: Path) -> str:
    """A Markdown link target for ``path`` relative to the report folder, with forward slashes."""
    return Path(os.path.relpath(Path(path).resolve(), out_dir.resolve())).as_posix()


def json_text(value: Any) -> str:
    """``value`` as faim's reports write JSON: indented, NaN and infinities as ``null`` (``_jsonable``), ending in a
    newline."""
    return json.dumps(_jsonable(value), indent=2, allow_nan=False) + "\n"


def _jsonable(value: Any) -> Any:
    """Convert to JSON types: NaN/inf to None, numpy scalars and arrays to Python, paths to strings."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist"):  # numpy scalar or array
        return _jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _check_results(results: Mapping[str, Any]) -> None:
    """Raise ValueError naming the first missing key or unknown task type of a results dict."""
    for key in ("model", "data", "split", "tasks"):
        if key not in results:
            raise ValueError(f"results lacks the key {key!r}; expected model, data, split and tasks")
    for name, task in results["tasks"].items():
        for key in ("type", "metrics"):
            if key not in task:
                raise ValueError(f"results['tasks'][{name!r}] lacks the key {key!r}")
        if task["type"] not in HEADLINE:
            raise ValueError(f"task {name!r} has type {task['type']!r}; expected one of {', '.join(HEADLINE)}")
