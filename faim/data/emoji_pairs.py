"""Real picture–caption pairs where only the combination tells: the EmojiOne set (Debian package
``ruby-gemojione``: 1,794 PNG emoji, 64×64, with names and keywords in ``config/index.json``; pictures
CC-BY-SA-4.0 © 2014 Ranks.com, index MIT), built into a caption/picture mismatch task.

Emoji are grouped with their skin-tone variants (near-identical pictures, one group), and the groups are split at
random into training and validation, so no picture of one split resembles one of the other. Within a split every
picture appears twice: once with its own caption (``mismatch`` 0) and once with the caption of another group's
picture (1), drawn so that every caption too appears once matched and once not. Text alone and picture alone
therefore carry no information about the label, and a model that reads one of them sits at AUROC 0.5 by
construction; only whether caption and picture belong together does. A caption is the emoji's name and its
keywords (``a steam locomotive: train, transportation, vehicle``).

``wrong: category`` draws the wrong caption from the same category (a food picture with another food's caption),
a harder variant where the caption's topic no longer gives the mismatch away. Nothing of the set is copied into the
project: it is read where the package put it (``apt-get download ruby-gemojione && dpkg -x`` it anywhere, or
install it).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

from faim.data.inputs import data_path, recipe_path_note
from faim.data.native import unknown_split
from faim.data.post import Post
from faim.registry import register_source, source_path
from faim.wording import shell_path

INSTALLED = "/usr/share/rubygems-integration/all/gems"
"""Where Debian installs Ruby gems; a ``root`` that is not the gem's folder is searched below for it."""
WRONG = ("random", "category")
TONE = re.compile(r"_tone\d$")


@register_source("emoji_pairs")
class EmojiPairsSource:
    """Matched and mismatched emoji captions, split by emoji group (see the module docstring).

    Args:
        root: The ``gemojione-*`` gem folder, or a folder holding one below it (where ``dpkg -x`` unpacked the
            package, or ``/usr/share/rubygems-integration/all/gems``).
        validation_fraction: Share of emoji groups held out for validation.
        seed: Seed of the split and of the wrong captions.
        wrong: ``"random"``: a wrong caption comes from any other group of the split; ``"category"``: from one of
            the same category.
        task: Name the label is stored under in ``Post.labels``: 1 when the caption is not the picture's.

    Raises:
        FileNotFoundError: When no ``gemojione`` index is found under ``root``, saying how to get it.
        ValueError: On a fraction outside (0, 1) or an unknown ``wrong``.
    """

    def __init__(
        self,
        root: str = INSTALLED,
        validation_fraction: float = 0.3,
        seed: int = 0,
        wrong: str = "random",
        task: str = "mismatch",
    ) -> None:
        if not 0 < validation_fraction < 1:
            raise ValueError(f"emoji_pairs: validation_fraction must be in (0, 1), got {validation_fraction!r}")
        if wrong not in WRONG:
            raise ValueError(f"emoji_pairs: wrong must be one of {', '.join(WRONG)}, got {wrong!r}")
        self.recipe_path = source_path()
        self.gem = find_gem(data_path(root), f"{self.recipe_path}.root")
        self.validation_fraction, self.seed, self.wrong, self.task = validation_fraction, seed, wrong, task
        self.index = json.loads((self.gem / "config" / "index.json").read_text(encoding="utf-8"))

    def splits(self) -> list[str]:
        return ["train", "validation"]

    def posts(self, split: str) -> list[Post]:
        """Every picture of the split twice: with its own caption, then with another's (posts in a seeded order).

        Raises:
            KeyError: For a split other than train and validation, naming the source by its recipe path
                (``unknown_split``).
        """
        if split not in self.splits():
            raise unknown_split(self.recipe_path, split, self.splits())
        emoji = self.split_emoji()[split]
        rng = random.Random(f"{self.seed}:{split}")
        wrong = self.wrong_captions(emoji, rng)
        posts = []
        for key in emoji:
            for mismatched, caption_of in ((0, key), (1, wrong[key])):
                posts.append(
                    Post(
                        id=f"{key}/{'mismatched' if mismatched else 'matched'}",
                        text=caption(self.index[caption_of]),
                        images=[str(self.gem / "assets" / "png" / f"{self.index[key]['unicode']}.png")],
                        labels={self.task: mismatched},
                        meta={"category": self.index[key]["category"], "emoji": key},
                        origin=f"{self.gem / 'config' / 'index.json'}:{key}",
                    )
                )
        rng.shuffle(posts)
        return posts

    def split_emoji(self) -> dict[str, list[str]]:
        """The emoji (index keys, with a picture) of each split, whole skin-tone groups in one split."""
        groups: dict[str, list[str]] = {}
        for key in sorted(self.index):
            if (self.gem / "assets" / "png" / f"{self.index[key]['unicode']}.png").is_file():
                groups.setdefault(TONE.sub("", key), []).append(key)
        names = sorted(groups)
        random.Random(self.seed).shuffle(names)
        held = set(names[: round(len(names) * self.validation_fraction)])
        return {
            "train": [key for name in sorted(groups) if name not in held for key in groups[name]],
            "validation": [key for name in sorted(groups) if name in held for key in groups[name]],
        }

    def wrong_captions(self, emoji: list[str], rng: random.Random) -> dict[str, str]:
        """Emoji → the emoji whose caption it gets as its mismatched post. Within each pool (the split, or with
        ``wrong: category`` each category, those too small to give every emoji another group's caption merged
        into the largest), the pool's tone groups are laid out in a random order and each emoji takes the caption
        of the emoji as many places on as the largest group has members: every caption is used once, never within
        the picture's own group."""
        pools: dict[str, list[str]] = {}
        for key in emoji:
            pools.setdefault(self.index[key]["category"] if self.wrong == "category" else "", []).append(key)
        largest = max(pools, key=lambda name: len(pools[name]))
        for name in [name for name in pools if name != largest and not derangeable(pools[name])]:
            pools[largest] += pools.pop(name)
        wrong = {}
        for members in pools.values():
            groups: dict[str, list[str]] = {}
            for key in members:
                groups.setdefault(TONE.sub("", key), []).append(key)
            names = sorted(groups)
            rng.shuffle(names)
            order = [key for name in names for key in groups[name]]
            step = max(len(keys) for keys in groups.values())
            wrong |= {key: order[(place + step) % len(order)] for place, key in enumerate(order)}
        return wrong

    def iter_posts(self, path: str | Path) -> list[Post]:
        raise ValueError("emoji_pairs builds its posts from the emoji index; it reads no other file")

    def describe(self, split: str) -> str:
        return f"{self.gem} ({split}, {self.wrong} wrong captions, seed {self.seed})"

    def fingerprint(self, split: str) -> str:
        """sha256 of the index and the construction's settings (the embedding-cache key of a split)."""
        digest = hashlib.sha256((self.gem / "config" / "index.json").read_bytes())
        digest.update(json.dumps([split, self.validation_fraction, self.seed, self.wrong, self.task]).encode())
        return digest.hexdigest()


def derangeable(members: list[str]) -> bool:
    """Whether every emoji of ``members`` can take the caption of one of another tone group, each caption once:
    no group holds more than half of them."""
    sizes: dict[str, int] = {}
    for key in members:
        sizes[TONE.sub("", key)] = sizes.get(TONE.sub("", key), 0) + 1
    return 2 * max(sizes.values()) <= len(members)


def caption(entry: dict) -> str:
    """An emoji's caption: its name, then its keywords."""
    keywords = [word for word in entry.get("keywords") or [] if word]
    return f"{entry['name']}: {', '.join(keywords)}" if keywords else entry["name"]


def find_gem(root: Path, where: str) -> Path:
    """The ``gemojione-*`` folder at or below ``root`` (the newest version when several).

    Raises:
        FileNotFoundError: Naming ``where`` (the recipe key, ``data.root``), where it looked, as given and resolved,
            and how to get the package; where ``root`` is relative and not there, that a recipe's data paths are read
            from the working directory (``recipe_path_note``).
    """
    if (root / "config" / "index.json").is_file():
        return root
    found = sorted(root.glob("**/gemojione-*/config/index.json")) if root.is_dir() else []
    if not found:
        raise FileNotFoundError(
            f"{where}: no gemojione index under {shell_path(root)} (resolved to {root.absolute()}); get the Debian "
            "package with `apt-get download ruby-gemojione && dpkg -x ruby-gemojione_*.deb DIR` (or install it) and "
            f"give DIR as root{recipe_path_note(root)}"
        )
    return found[-1].parent.parent
