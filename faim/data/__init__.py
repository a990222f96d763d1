"""Posts, data sources and batching."""

from faim.data.post import Post

__all__ = ["Post"]
