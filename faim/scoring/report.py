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
    """

    posts: int = 0
    unheld: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()

    @classmethod
    def read(cls, recorded: dict[str, Any]) -> Held:
        """``Held`` as a run's manifest records it (``record``)."""
        return cls(recorded["posts"], tuple(recorded["unheld"]), tuple(recorded["unread"]))

    def record(self) -> dict[str, Any]:
        """What a run's manifest records of it, as JSON writes it."""
        return {"posts": self.posts, "unheld": list(self.unheld), "unread": list(self.unread)}

    @classmethod
    def of_all(cls, parts: Iterable[Held]) -> Held:
        """What the rows of every part hold together: the kinds no part holds, and the columns unread in any."""
        parts = list(parts)
        unheld = [kind for kind in parts[0].unheld if all(kind in part.unheld for part in parts)] if parts else []
        unread = dict.fromkeys(column for part in parts for column in part.unread)
        return cls(sum(part.posts for part in parts), tuple(unheld), tuple(unread))


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
