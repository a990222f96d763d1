"""CoAID COVID-19 misinformation (Cui & Lee, 2020) as a source: dated snapshot folders of news titles.

Each snapshot folder (``05-01-2020/`` ...) holds ``NewsFakeCOVID-19.csv`` and ``NewsRealCOVID-19.csv`` (a
``title`` column, plus ``type``: post or article, urls, content...) and may hold ``ClaimFakeCOVID-19.csv``
and ``ClaimRealCOVID-19.csv`` (short claims: ``title``, ``fact_check_url``, ``news_url``). The split is
temporal: one snapshot is validation, every other one train. News repeats across snapshots, so identical
titles (compared ignoring case and runs of spaces) are kept once per split, and train drops every title
validation holds. Titles wrapped in a literal pair of double quotes (an artefact of the 05-01-2020
snapshot, almost only in real rows, that a model would learn as a cue) are unwrapped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from faim.data.inputs import data_path, recipe_path_note
from faim.data.native import read_delimited, unknown_split
from faim.data.post import Post
from faim.data.tabular import sha256_files
from faim.registry import register_source, source_path, suggest

NEWS = {"NewsFakeCOVID-19.csv": 1, "NewsRealCOVID-19.csv": 0}
CLAIMS = {"ClaimFakeCOVID-19.csv": 1, "ClaimRealCOVID-19.csv": 0}
LABELS = ["real", "fake"]
SNAPSHOT = re.compile(r"\d{2}-\d{2}-\d{4}")


@register_source("coaid")
class CoaidSource:
    """The CoAID folder holding dated snapshot folders.

    Ids are ``"<snapshot>/<file stem>/<row index>"``; ``Post.meta`` holds ``snapshot``, ``kind`` (news or
    claim) and ``type`` (post or article; ``None`` for claims and unset rows).

    Args:
        root: The folder holding the ``MM-DD-YYYY`` snapshot folders.
        task: Name the labels (1 fake, 0 real; ``LABELS``) are stored under in ``Post.labels``.
        validation_snapshot: The snapshot held out for validation (the default is the latest); the others train.
        include_claims: Also read the ``Claim*`` files.
    """

    def __init__(
        self, root: str, task: str = "fake", validation_snapshot: str = "11-01-2020", include_claims: bool = False
    ) -> None:
        self.root = data_path(root)
        self.task = task
        self.validation_snapshot = validation_snapshot
        self.include_claims = include_claims
        self.names = NEWS | CLAIMS if include_claims else NEWS
        self.recipe_path = source_path()

    def splits(self) -> list[str]:
        """Always ``["train", "validation"]``."""
        return ["train", "validation"]

    def snapshots(self) -> list[str]:
        """The snapshot folders under ``root`` holding a file this source reads, oldest first."""
        folders = [p for p in self.root.glob("*") if SNAPSHOT.fullmatch(p.name) and self._files(p)]
        return sorted((p.name for p in folders), key=lambda name: datetime.strptime(name, "%m-%d-%Y"))

    def files(self, split: str) -> list[Path]:
        """The data files of ``split``, oldest snapshot first.

        Raises:
            KeyError: On a split other than train and validation.
            FileNotFoundError: When ``root`` holds no snapshot folder, naming it by its recipe key and saying what it
                holds.
            ValueError: When ``validation_snapshot`` is not one of the snapshots, naming its recipe key and them.
        """
        if split not in self.splits():
            raise unknown_split(self.recipe_path, split, self.splits())
        snapshots = self.snapshots()
        if not snapshots:
            raise FileNotFoundError(
                f"{self.recipe_path}.root: {self.root} (resolved to {self.root.absolute()}) holds no MM-DD-YYYY folder "
                f"holding {', '.join(self.names)}; root must be the CoAID folder holding its dated snapshot folders "
                f"(05-01-2020, ...){recipe_path_note(self.root)}"
            )
        if self.validation_snapshot not in snapshots:
            raise ValueError(
                f"{self.recipe_path}.validation_snapshot: {self.validation_snapshot!r} not found under {self.root}"
                f"{suggest(self.validation_snapshot, snapshots)}; snapshots: {', '.join(snapshots)}"
            )
        chosen = [name for name in snapshots if (name == self.validation_snapshot) == (split == "validation")]
        return [file for name in chosen for file in self._files(self.root / name)]

    def check_split(self, split: str) -> None:
        """Find the files of ``split`` (``files``), reading none of them."""
        self.files(split)

    def posts(self, split: str) -> list[Post]:
        """The split's posts with each title kept once; train also drops the titles validation holds."""
        held = set() if split == "validation" else {_key(post.text) for post in self.posts("validation")}
        posts = []
        for post in (post for file in self.files(split) for post in self.iter_posts(file)):
            key = _key(post.text)
            if key not in held:
                held.add(key)
                posts.append(post)
        return posts

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Every row of one CoAID file (labelled by its name) or of a snapshot folder's files, without deduplication.

        Raises:
            FileNotFoundError: When the path does not exist.
            ValueError: When a file's name is not a CoAID one or it has no ``title`` column.
        """
        path = Path(path)
        for file in self._files(path) if path.is_dir() else [path]:
            if file.name not in NEWS | CLAIMS:
                raise ValueError(
                    f"coaid: cannot tell fake from real for {file}: expected one of {', '.join(NEWS | CLAIMS)}"
                )
            stem = file.name.removesuffix("COVID-19.csv")
            kind = "claim" if file.name in CLAIMS else "news"
            for index, (line, row) in enumerate(read_delimited(file, required=("title",))):
                yield Post(
                    id=f"{file.parent.name}/{stem}/{index}",
                    text=_title(row["title"]),
                    labels={self.task: (NEWS | CLAIMS)[file.name]},
                    meta={"snapshot": file.parent.name, "kind": kind, "type": row.get("type") or None},
                    origin=f"{file}:{line}",
                )

    def describe(self, split: str) -> str:
        """The root and the snapshots of ``split``."""
        return f"{self.root} ({split}: {', '.join(sorted({file.parent.name for file in self.files(split)}))})"

    def fingerprint(self, split: str) -> str:
        """sha256 of the split's files (validation's too, as train excludes its titles) and the arguments."""
        options = {
            "split": split,
            "task": self.task,
            "validation": self.validation_snapshot,
            "claims": self.include_claims,
        }
        files = self.files(split) + (self.files("validation") if split == "train" else [])
        return sha256_files(files, extra=json.dumps(options, sort_keys=True))

    def _files(self, folder: Path) -> list[Path]:
        return [folder / name for name in self.names if (folder / name).is_file()]


def _title(cell: str) -> str | None:
    """The title, unwrapped from a literal pair of double quotes; ``None`` when blank."""
    title = cell.strip()
    if len(title) > 1 and title[0] == title[-1] == '"':
        title = title[1:-1].strip()
    return title or None


def _key(text: str | None) -> str:
    """A title compared ignoring case and runs of whitespace."""
    return " ".join((text or "").split()).casefold()
