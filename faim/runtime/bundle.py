"""What an exported model directory holds, read back and checked without torch.

Layout (written by ``faim.export``)::

    faim-export.json     format, faim version (and the onnxruntime that wrote ONNX graphs), element kinds and the
                         encoder reading each, every encoder's graphs and preprocessing, the fusion graph's inputs,
                         tasks with labels, temperatures, logit shifts and thresholds, and the sha256 of every other
                         file
    encoders/<name>/     one graph per encoder part (a stack of encoders has several), tokenizer.json and the
                         text-folding tables its preprocessing reads
    fusion.onnx          fusion and heads: per-kind element embeddings and masks in, the whole-post embedding and
                         each task's logits and calibrated probabilities out

The graphs are ONNX (``encoder.onnx``, ``fusion.onnx``; ``graph_format`` "onnx") or torch.export programs
(``encoder.pt2``, ``fusion.pt2``; "pt2", read by ``faim.export.programs``).

Every listed file's hash is checked before anything is read; nothing is unpickled.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from faim.artifact_manifest import EXPORT_MANIFEST, MANIFEST, RUN_MODEL, file_not_folder
from faim.file_digests import check_digests
from faim.registry import a_type

FORMAT_VERSION = 1
EMBEDDING = "embedding"
"""Name of the fusion graph's whole-post embedding output."""
ORT_VERSION = "onnxruntime_version"
"""The manifest's key for the version of the onnxruntime an ONNX export was written (and checked) with; an export an
earlier faim wrote has none."""


class ExportError(ValueError):
    """A model that cannot be exported as it is, or an export directory that is incomplete, modified or of another
    format."""


def logits_name(task: str) -> str:
    """Name of the fusion graph's output holding ``task``'s raw logits."""
    return f"{task}.logits"


def probabilities_name(task: str) -> str:
    """Name of the fusion graph's output holding ``task``'s calibrated probabilities."""
    return f"{task}.probabilities"


def fusion_outputs(tasks: list[str]) -> list[str]:
    """The fusion graph's outputs in order: the whole-post embedding, then each task's logits and probabilities."""
    return [EMBEDDING] + [name for task in tasks for name in (logits_name(task), probabilities_name(task))]


def elements_names(kind: str) -> tuple[str, str]:
    """Names of the fusion graph's inputs for ``kind``: embeddings ``[B, n, d]`` and mask ``[B, n]``."""
    return f"{kind}.embeddings", f"{kind}.mask"


REQUIRED = {"format", "files", "max_elements", "kinds", "encoders", "fusion", "tasks"}
"""The keys every export's manifest holds."""


PT2_LOADER = "load it with faim.export.programs.load_export, which needs torch"
"""What reads an export of torch.export programs (``graph_format`` "pt2"): neither the runtime nor faim score does."""

LOADERS = {"onnx": "load it with faim.runtime.load", "pt2": PT2_LOADER}
"""What reads an export of each ``graph_format``."""


def graph_format(manifest: dict[str, Any]) -> str:
    """The format of an export's graphs, "onnx" or "pt2" (an export written before pt2 existed names none: onnx)."""
    return manifest.get("graph_format", "onnx")


def check_graph_format(directory: str | Path, manifest: dict[str, Any], expected: str) -> None:
    """Refuse the export in ``directory`` (its ``manifest``) when its graphs are not of the format ``expected``.

    Raises:
        ExportError: Naming ``directory``, both formats and what loads the export (``LOADERS``).
    """
    found = graph_format(manifest)
    if found != expected:
        hint = f" ({LOADERS[found]})" if isinstance(found, str) and found in LOADERS else ""
        raise ExportError(f"{directory}: its graphs are {found}, not {expected}{hint}")


@contextmanager
def manifest_entry(
    directory: Path, field: str, listing: str = EXPORT_MANIFEST, refusal: type[ValueError] = ExportError
) -> Iterator[None]:
    """Read the entry ``field`` of the manifest ``listing`` in ``directory`` (an export's by default; a saved model's,
    ``faim.artifact_manifest.MANIFEST``, with ``refusal`` its ``ArtifactError``) within the block: one missing a key,
    of the wrong type or holding a value refused is refused naming the manifest and ``field`` (``"encoders.image"``),
    as the manifest's own checks (``read_bundle``) name it.

    Raises:
        ExportError: Or ``refusal``: ``MANIFEST: FIELD: REASON``, for a ``KeyError`` (``no 'KEY'``), ``TypeError``,
            ``AttributeError`` or ``ValueError`` the block raises (a ``refusal`` passes as it is), that error its
            cause. Only reading the entry belongs within: what is built from the model's verified files (a graph
            opened, a tokenizer read) is built after, its faults its own.
    """
    try:
        yield
    except refusal:
        raise
    except KeyError as error:
        raise refusal(f"{directory / listing}: {field}: no {error.args[0]!r}") from error
    except (TypeError, AttributeError, ValueError) as error:
        raise refusal(f"{directory / listing}: {field}: {error}") from error


def whole_number(value: Any) -> int:
    """``value``, a manifest's count (``max_elements``, a text part's ``max_length``, an embedding's ``dim``): a whole
    number of at least 1, as every export writes (none reads no element or no token; a negative count would cut the
    last off a list).

    Raises:
        ValueError: Saying what it should be when it is not a whole number (``2.7``, ``true``, ``"3"``) or is below 1.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a whole number of at least 1, got {value!r}")
    return value


def task_labels(entry: dict[str, Any]) -> tuple[str, ...]:
    """The label names of ``entry``, a task of a manifest's ``tasks`` (an export's or a saved model's): a list of
    names (strings), at least one, and two for a binary task (its negative and positive ones), as every model writes
    them (``tuple`` would read a string as its letters and a mapping as its keys).

    Raises:
        KeyError: Naming ``name``, ``type`` or ``labels`` where the entry lacks it.
        ValueError: Naming the task and its labels, and its type where their count does not fit it.
    """
    name, task_type, labels = entry["name"], entry["type"], entry["labels"]
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise ValueError(f"task {name!r}: labels {labels!r} is not a list of label names")
    if not labels or (task_type == "binary" and len(labels) != 2):
        wanted = "two labels (negative, positive)" if task_type == "binary" else "labels"
        raise ValueError(f"task {name!r} ({task_type}): expected {wanted}, got {labels}")
    return tuple(labels)


def text(value: Any) -> str:
    """``value``, a manifest's string (an e5 text part's ``prefix``).

    Raises:
        ValueError: Saying what it should be when it is not a string (``5``, ``null``).
    """
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


Setting = TypeVar("Setting")


def setting(entry: dict[str, Any], key: str, read: Callable[[Any], Setting]) -> Setting:
    """The setting ``key`` of a manifest's entry (an encoder's, the fusion's, a preprocessing entry) as ``read``
    (``whole_number``, ``text``) checks it.

    Raises:
        KeyError: Naming ``key`` where the entry lacks it.
        ValueError: ``KEY: REASON``, where ``read`` refuses its value (``max_length: expected a whole number of at
            least 1, got '512'``).
    """
    try:
        return read(entry[key])
    except ValueError as error:
        raise ValueError(f"{key}: {error}") from error


FileResolver = Callable[[str, Any], Path]
"""Finds the file of an export that a setting of its manifest's entry names: ``resolve("graph", "fusion.onnx")``;
``faim.file_digests.file_finder(directory, listing)`` is the export's own."""


def read_bundle(directory: str | Path) -> dict[str, Any]:
    """The manifest of an exported model, after checking every file it lists.

    Raises:
        ExportError: Naming the directory when it does not exist, is a file or holds no export (naming the model of
            a training run's folder), or the manifest when it is not JSON, not an object, of another format or
            without a key every export's has; or naming a file missing or modified.
    """
    root = Path(directory)
    path = root / EXPORT_MANIFEST
    if not root.exists():
        raise ExportError(f"{root}: does not exist")
    if not root.is_dir():
        raise ExportError(file_not_folder(root))
    if not path.is_file() and (root / RUN_MODEL / MANIFEST).is_file():
        model = root / RUN_MODEL
        raise ExportError(
            f"{root}: a training run's folder, not an export; export its model with faim export {model} -o DIR "
            f"(faim score --runtime onnx scores {model} as it is)"
        )
    if not path.is_file():
        hint = " (a saved model: export it first with faim export)" if (root / MANIFEST).is_file() else ""
        raise ExportError(f"{root}: not an exported faim model (no {EXPORT_MANIFEST}){hint}")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ExportError(f"{path}: not a faim export's manifest ({error})") from None
    if not isinstance(manifest, dict):
        raise ExportError(f"{path}: not a faim export's manifest (not a JSON object)")
    if manifest.get("format") != FORMAT_VERSION:
        raise ExportError(
            f"{path}: export format {manifest.get('format')} is not supported (expected {FORMAT_VERSION})"
        )
    if missing := sorted(REQUIRED - manifest.keys()):
        raise ExportError(f"{path}: not a faim export's manifest (no {', '.join(missing)})")
    if not isinstance(manifest["files"], dict):
        got = a_type(manifest["files"])
        raise ExportError(f"{path}: files: expected a mapping of file name to sha256, got {got}")
    check_digests(root, manifest, EXPORT_MANIFEST, ExportError)
    return manifest
