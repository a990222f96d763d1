"""Batch scoring of content dumps: streaming, parallel, resumable; embedded engine or Ray Data.

``faim.scoring.engine.score_dump`` scores with a saved model under torch; ``faim.scoring.exported.score_exported``
with its export under onnxruntime, in processes that import no torch. Both run shards through
``faim.scoring.runner``. This package imports none of them, so the torch-free path stays torch-free.
"""
