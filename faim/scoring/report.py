"""``ShardReport``: what scoring one shard produced; scorers return it and the run's manifest records it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ShardReport:
    """What scoring one shard produced, and which process spent how long on it (0 when read back from disk)."""

    key: str
    rows: int
    errors: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    worker: int = 0
