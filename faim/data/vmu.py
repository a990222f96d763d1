"""MediaEval 2016 Verifying Multimedia Use (the "Twitter" fake-news set) as a source: ``posts.txt`` + image tree.

``posts.txt`` is tab-separated with a header (``post_id, post_text, user_id, image_id(s), username, timestamp,
label``), read with quotes as text (pandas ``quoting=3``); its texts hold JSON-style escapes (``\\n``, ``\\"``,
``\\/``, ``\\\\``), decoded here. Images lie under ``mediaeval2016/devset/Medieval2016_DevSet_Images/<event>/``,
in ``fakes/`` and ``reals/`` or directly, named ``<image_id>.<ext>``; an event's ``.txt`` files list the ids
of its videos (id, url), which have no local file. A post's event is that of its image ids: the event folder
holding a file or video entry whose id starts with the same token (``sandy`` of ``sandy_fake_12``), so posts
whose image is missing still get one. The split is by event, never random: the same image recurs across
many posts, and a random split would let a model memorise images.
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from faim.data.inputs import check_exists, data_path
from faim.data.native import Records, label_index, read_delimited, unknown_split
from faim.data.post import Post
from faim.data.tabular import sha256_files
from faim.registry import register_source, source_path, suggest
from faim.wording import plural

logger = logging.getLogger(__name__)

IMAGES = Path("mediaeval2016/devset/Medieval2016_DevSet_Images")
LABELS = ["real", "fake"]
COLUMNS = ("post_id", "post_text", "image_id(s)", "username", "label")
# The six MediaEval 2015 test events (the 2016 dev set is 2015's dev and test sets): both classes, 24% of posts.
VALIDATION_EVENTS = (
    "Garissa_Attack",
    "Nepal_earthquake",
    "Samurai_ghost",
    "Solar_eclipse",
    "Syrian_boy",
    "Varoufakis_zdf",
)
ESCAPE = re.compile(r'\\([nr"/\\])')
UNESCAPED = {"n": "\n", "r": "\r", '"': '"', "/": "/", "\\": "\\"}
LAYOUT = (
    "root must be the MediaEval 2016 VMU folder holding posts.txt (tab-separated, with a post_id, post_text, "
    f"image_id(s), username and label header) and the image tree {IMAGES.as_posix()}/<event>/"
)
"""What a VMU folder holds, as an error naming a file or folder not there says it."""


@register_source("vmu")
class VmuSource:
    """The MediaEval 2016 VMU folder holding ``posts.txt`` and ``mediaeval2016/devset/...`` images.

    Post ids are tweet ids; ``Post.images`` holds the local files of the post's image ids (paths relative to
    the image folder, set as ``image_root``); ``Post.meta`` holds ``event`` (its folder name) and ``user``.

    Args:
        root: The folder holding ``posts.txt`` and ``mediaeval2016/``.
        task: Name the labels (1 fake, 0 real; ``LABELS``) are stored under in ``Post.labels``.
        validation_events: Event folder names held out for validation; ``None``: ``VALIDATION_EVENTS`` (the
            MediaEval 2015 test events: 3,781 of 15,629 posts, 2,564 fake / 1,217 real).
        require_image: Drop posts with no local image file (videos, images absent from the tree); each
            split's count lands in ``self.dropped`` and is logged.
    """

    def __init__(
        self, root: str, task: str = "fake", validation_events: list[str] | None = None, require_image: bool = False
    ) -> None:
        self.root = data_path(root)
        self.task = task
        self.validation_events = list(VALIDATION_EVENTS if validation_events is None else validation_events)
        self.require_image = require_image
        self.dropped: dict[str, int] = {}
        self.recipe_path = source_path()

    def splits(self) -> list[str]:
        """Always ``["train", "validation"]``."""
        return ["train", "validation"]

    def posts(self, split: str) -> list[Post]:
        """The posts of ``split``'s events, in file order.

        Raises:
            KeyError: On a split other than train and validation.
            FileNotFoundError: When ``posts.txt`` or the image folder is not there (``check_split``).
            ValueError: When a validation event is not in the data, naming the events there are.
        """
        self._check_given(split)
        posts = list(self._posts(self.root / "posts.txt", self._root_rows()))  # which finds the image folder
        events = sorted({post.meta["event"] for post in posts})
        for event in self.validation_events:
            if event not in events:
                raise ValueError(f"vmu: validation event {event!r} not found{suggest(event, events)}; events: {events}")
        chosen = [post for post in posts if (post.meta["event"] in self.validation_events) == (split == "validation")]
        if not self.require_image:
            return chosen
        kept = [post for post in chosen if post.images]
        self.dropped[split] = len(chosen) - len(kept)
        logger.warning("vmu: %s: dropped %d of %d posts without a local image", split, self.dropped[split], len(chosen))
        return kept

    def check_split(self, split: str) -> None:
        """Find ``posts.txt`` and the image folder, which every split is read from, reading neither.

        Raises:
            KeyError: On a split other than train and validation.
            FileNotFoundError: Naming what is not there, the recipe key ``root`` and what the folder holds (``LAYOUT``).
        """
        self._check_given(split)
        self._root_rows()  # found at once; its rows are read only as they are iterated
        self._image_root()

    def _check_given(self, split: str) -> None:
        """Refuse a split this source does not give (``unknown_split``)."""
        if split not in self.splits():
            raise unknown_split(self.recipe_path, split, self.splits())

    def _root_rows(self) -> Records:
        """The rows of the root's ``posts.txt`` (``_rows``), named where it is not there as the recipe key ``root``
        names it, with what the folder holds (``LAYOUT``)."""
        return _rows(self.root / "posts.txt", f"{self.recipe_path}.root", LAYOUT)

    def _image_root(self) -> Path:
        """The image folder, found there, absolute (``check_split``)."""
        return check_exists(self.root / IMAGES, f"{self.recipe_path}.root", LAYOUT, folder=True).absolute()

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Every post of a file in the ``posts.txt`` format, with images and events from this source's image tree.

        Raises:
            FileNotFoundError: When the file does not exist (named as given and as resolved), or the image folder
                (named as the recipe key ``root`` names it, with what the folder holds, ``check_exists``).
            ValueError: On a missing column, an unknown label, or image ids of no or several events (naming file
                and line).
        """
        path = Path(path)
        yield from self._posts(path, _rows(path))

    def _posts(self, path: Path, rows: Records) -> Iterator[Post]:
        """The posts of ``rows``, read from ``path`` (``iter_posts``)."""
        image_root = self._image_root()
        files, events = _index(image_root)
        for line, row in rows:
            origin = f"{path}:{line}"
            ids = [image.strip() for image in row["image_id(s)"].split(",") if image.strip()]
            found = {events.get(image.split("_")[0]) for image in ids}
            if len(found) != 1 or None in found:
                raise ValueError(
                    f"{origin}: cannot tell the event of {plural(len(ids), 'image')} ({', '.join(ids) or 'none'}) "
                    f"from the folders in {image_root}"
                )
            yield Post(
                id=row["post_id"],
                text=ESCAPE.sub(lambda match: UNESCAPED[match[1]], row["post_text"]) or None,
                images=[files[image] for image in ids if image in files],
                labels={self.task: label_index(row["label"], LABELS, origin)},
                meta={"event": found.pop(), "user": row["username"]},
                origin=origin,
                image_root=image_root,
            )

    def describe(self, split: str) -> str:
        """``posts.txt`` and the events of ``split``."""
        which = "validation events" if split == "validation" else "all events but"
        return f"{self.root / 'posts.txt'} ({split}: {which} {', '.join(self.validation_events)})"

    def fingerprint(self, split: str) -> str:
        """sha256 of ``posts.txt``, the split and the arguments choosing its posts (image bytes are not read)."""
        options = {"split": split, "task": self.task, "events": self.validation_events, "image": self.require_image}
        return sha256_files([self.root / "posts.txt"], extra=json.dumps(options, sort_keys=True))


def _rows(path: Path, where: str = "", hint: str = "") -> Records:
    """The rows of ``path``, a file in the ``posts.txt`` format (``read_delimited``), found at once; ``where`` and
    ``hint`` are put around the message of one not there (``check_exists``)."""
    return read_delimited(path, delimiter="\t", quoted=False, required=COLUMNS, where=where, hint=hint)


def _index(image_root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Image id → file path relative to ``image_root``, an existing folder, and id token (before the first ``_``) →
    event folder.

    Tokens found in several event folders map to none of them.
    """
    files: dict[str, str] = {}
    token_events: dict[str, set[str]] = defaultdict(set)
    for file in sorted(image_root.rglob("*")):
        parts = file.relative_to(image_root).parts
        if not file.is_file() or len(parts) < 2:
            continue
        event = parts[0]
        if file.suffix == ".txt":
            ids = [row["id"] for _, row in read_delimited(file, delimiter="\t", quoted=False, required=("id",))]
        else:
            ids = [file.stem]
            files[file.stem] = file.relative_to(image_root).as_posix()
        for image in ids:
            token_events[image.split("_")[0]].add(event)
    return files, {token: events.pop() for token, events in token_events.items() if len(events) == 1}
