"""LIAR political statements (Wang, 2017) as a source: ``train.tsv``, ``valid.tsv`` and ``test.tsv``.

Each file has 14 tab-separated columns and no header, read with quotes as text (pandas ``quoting=3``): id
(``2635.json``), label, statement, subject(s), speaker, job title, state, party, the speaker's credit
history (counts of barely-true, false, half-true, mostly-true and pants-on-fire statements) and context.
The credit history counts *include the statement itself*, so text built with ``metadata=True`` leaks part
of the label, as in the original paper's metadata models.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faim.data.inputs import data_path
from faim.data.native import FilePerSplit, check_choice, label_index, read_found
from faim.data.post import Post
from faim.data.tabular import sha256_files
from faim.registry import register_source, source_path

FILES = {"train": "train.tsv", "validation": "valid.tsv", "test": "test.tsv"}
SIX_WAY = ["pants-fire", "false", "barely-true", "half-true", "mostly-true", "true"]
BINARY = ["not-false", "false"]
LABELS = {"six_way": SIX_WAY, "binary": BINARY}
HISTORY = ("barely-true", "false", "half-true", "mostly-true", "pants-fire")
FIELDS = ("subject", "speaker", "job", "state", "party")
COLUMNS = ("id", "label", "statement", *FIELDS, *(f"history_{name}" for name in HISTORY), "context")
SHOWN = ("speaker", "party", "job", "state", "subject", "context")
LAYOUT = (
    "root must be the LIAR folder holding train.tsv, valid.tsv and, where there is one, test.tsv: "
    "14 tab-separated columns, no header"
)
"""What a LIAR folder holds, as an error naming a file not there says it."""


@register_source("liar")
class LiarSource(FilePerSplit):
    """A LIAR folder holding ``train.tsv``, ``valid.tsv`` and, when present, ``test.tsv``.

    ``Post.meta`` always holds the metadata for slicing: ``subject`` (comma-separated), ``speaker``, ``job``,
    ``state``, ``party``, ``context`` (``None`` when empty) and ``history_<label>`` counts (ints).

    Args:
        root: The folder holding the ``.tsv`` files.
        task: Name the integer labels are stored under in ``Post.labels``.
        labels: ``"six_way"``: the index in ``SIX_WAY`` (pants-fire 0 ... true 5); ``"binary"``: 1 for
            pants-fire, false and barely-true, 0 for the rest (``BINARY``).
        metadata: Append the metadata to the text: ``"statement [SEP] speaker: ...; party: ...; job: ...;
            state: ...; subject: ...; context: ...; history: barely-true 0, false 1, ..."`` (empty fields left out).
    """

    SPLIT_FILES = FILES
    LAYOUT = LAYOUT

    def __init__(self, root: str, task: str = "truth", labels: str = "six_way", metadata: bool = False) -> None:
        check_choice("liar", "labels", labels, list(LABELS))
        self.root = data_path(root)
        self.task = task
        self.labels = labels
        self.metadata = metadata
        self.recipe_path = source_path()

    def posts_in(self, path: Path) -> Iterator[Post]:
        """Posts of a file in the LIAR format, found there.

        Raises:
            ValueError: On a row without 14 cells, an unknown label or a non-integer count (naming file and line).
        """
        for line, row in read_found(path, delimiter="\t", quoted=False, names=COLUMNS):
            origin = f"{path}:{line}"
            label = label_index(row["label"], SIX_WAY, origin)
            meta: dict[str, Any] = {name: row[name].strip() or None for name in (*FIELDS, "context")}
            meta |= {f"history_{name}": _count(row[f"history_{name}"], origin) for name in HISTORY}
            yield Post(
                id=row["id"],
                text=_text(row["statement"], meta) if self.metadata else row["statement"] or None,
                labels={self.task: label if self.labels == "six_way" else int(label <= SIX_WAY.index("barely-true"))},
                meta=meta,
                origin=origin,
            )

    def describe(self, split: str) -> str:
        """The file of ``split``."""
        return str(self.location(split))

    def fingerprint(self, split: str) -> str:
        """sha256 of the split's file and the arguments shaping its texts and labels."""
        options = {"split": split, "task": self.task, "labels": self.labels, "metadata": self.metadata}
        return sha256_files([self.location(split)], extra=json.dumps(options, sort_keys=True))


def _count(cell: str, origin: str) -> int | None:
    if not cell.strip():
        return None
    try:
        return int(float(cell))
    except ValueError:
        raise ValueError(f"{origin}: credit history count {cell!r} is not a number") from None


def _text(statement: str, meta: dict[str, Any]) -> str:
    """The statement followed by the readable metadata."""
    parts = [f"{name}: {meta[name]}" for name in SHOWN if meta[name]]
    history = [f"{name} {meta[f'history_{name}']}" for name in HISTORY if meta[f"history_{name}"] is not None]
    if history:
        parts.append(f"history: {', '.join(history)}")
    return f"{statement} [SEP] {'; '.join(parts)}"
