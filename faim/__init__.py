"""faim: whole-post integrity embeddings."""
__version__ = "0.1.0"
