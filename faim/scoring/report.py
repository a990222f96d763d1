"""``ShardReport``: what scoring one shard produced; scorers return it and the run's manifest records it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

HELD_KEY = "faim.held"
"""The key of a part file's Parquet key-value metadata that records what its shard's rows hold (``Held.record``, as
JSON), read back where the part's manifest line was lost (a kill between the two)."""


@dataclass(frozen=True)
class Held:
    """What the rows of a shard, or of a whole run, hold, as the end of a run warns of it.

    Attributes:
        posts: How many of the rows are posts (the others are errors).
        unheld: The element kinds the model reads that no post of the rows holds, in the order the run reads them
            (every kind, of rows holding no post).
        unread: The columns the rows hold that no mapping reads, in the order first met, as
            ``faim.data.columns.ColumnMap.unread`` lists them.
        overfull: How many of the posts hold more pictures or comments than the model reads of a post (``limit``),
            and so are scored from their first ones alone (``faim.data.elements.overfull``).
        most: The most pictures or comments any of those holds (0 where none does).
        limit: How many of each the model reads of a post (its ``max_elements``; 0 where not recorded).
    """

    posts: int = 0
    unheld: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()
    overfull: int = 0
    most: int = 0
    limit: int = 0

    @classmethod
    def read(cls, recorded: dict[str, Any]) -> Held:
        """``Held`` as a run's manifest records it (``record``); a record of a faim that did not count the posts
        holding more than the model reads (``overfull``) counts none."""
        counts = (recorded.get("overfull", 0), recorded.get("most", 0), recorded.get("limit", 0))
        return cls(recorded["posts"], tuple(recorded["unheld"]), tuple(recorded["unread"]), *counts)

    def record(self) -> dict[str, Any]:
        """What a run's manifest records of it, as JSON writes it."""
        return {"posts": self.posts, "unheld": list(self.unheld), "unread": list(self.unread),
                "overfull": self.overfull, "most": self.most, "limit": self.limit}  # fmt: skip

    @classmethod
    def of_all(cls, parts: Iterable[Held]) -> Held:
        """What the rows of every part hold together: the kinds no part holds, the columns unread in any, and the
        posts of all holding more pictures or comments than the model reads."""
        parts = list(parts)
        unheld = [kind for kind in parts[0].unheld if all(kind in part.unheld for part in parts)] if parts else []
        unread = dict.fromkeys(column for part in parts for column in part.unread)
        overfull = sum(part.overfull for part in parts)
        most, limit = max((part.most for part in parts), default=0), max((part.limit for part in parts), default=0)
        return cls(sum(part.posts for part in parts), tuple(unheld), tuple(unread), overfull, most, limit)


@dataclass
class ShardReport:
    """What scoring one shard produced, and which process spent how long on it (0 when read back from disk);
    ``held``: what its rows hold, ``None`` where it is not known (a shard recorded by a faim that did not record it)."""

    key: str
    rows: int
    errors: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    worker: int = 0
    held: Held | None = None
