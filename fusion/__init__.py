"""Built-in fusion layers; importing this package registers them."""

from .attention import AttentionFusion
from .concat import ConcatFusion
from .gated import GatedFusion
from .interaction import InteractionFusion

__all__ = ["AttentionFusion", "ConcatFusion", "GatedFusion", "InteractionFusion"]
