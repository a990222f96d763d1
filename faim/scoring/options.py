"""``ScoringOptions``: which speed-ups torch scoring applies (``faim.scoring.optimize`` applies them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ScoringOptions:
    """Which speed-ups to apply (all but ``bf16`` and ``compile`` on by default: those on compute in fp32);
    ``ScoringOptions.exact()`` is plain fp32 with full JPEG decoding."""

    channels_last: bool = True
    bf16: bool = False
    draft_jpeg: bool = True
    freeze_images: bool = True
    fuse_images: bool = True
    compile: bool = False

    @classmethod
    def exact(cls) -> ScoringOptions:
        """No approximation: the same computation as ``Detector.score``."""
        return cls(
            channels_last=False, bf16=False, draft_jpeg=False, freeze_images=False, fuse_images=False, compile=False
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
