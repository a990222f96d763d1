"""Built-in task heads; importing this package registers them."""

from .base import Head
from .binary import BinaryHead
from .multiclass import MulticlassHead
from .multilabel import MultilabelHead

__all__ = ["BinaryHead", "Head", "MulticlassHead", "MultilabelHead"]
