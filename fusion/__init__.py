"""Built-in fusion layers; importing this package registers them."""

from .align import AlignFusion
from .attention import AttentionFusion
from .concat import ConcatFusion
from .gated import GatedFusion
from .interaction import InteractionFusion

__all__ = ["AlignFusion", "AttentionFusion", "ConcatFusion", "GatedFusion", "InteractionFusion"]
