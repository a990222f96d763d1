"""What a text encoder attributes to: the names of a text's pieces that get token attributions."""

from __future__ import annotations

from faim.encoder import Encoder


def attributed_names(encoder: Encoder, text: str) -> list[str]:
    """The pieces of ``text`` that get token attributions (not fixed, not padding), as ``encoder`` names them."""
    pieces = encoder.token_embeddings()
    inputs = encoder.preprocessor()([text])
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    return [name for name, kept in zip(pieces.names(ids[0].tolist()), pieces.attributed(ids, mask)[0]) if kept]
