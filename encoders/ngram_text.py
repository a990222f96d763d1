"""Character and word n-grams as a faim text encoder, fitted on the training posts (scikit-learn).

A text becomes TF-IDF weights of its character n-grams (within word boundaries) and word n-grams, sublinear term
frequency, each family L2-normalised; a truncated SVD fitted on the training texts (latent semantic analysis)
projects them to ``dim`` dense features, L2-normalised. N-grams generalise differently from pretrained dense
encoders (they read the platform's own vocabulary, slang and slurs) and character n-grams survive spelling
evasion: ``h8te`` still shares most of its trigrams with ``hate``.

The encoder learns from the training posts before anything is embedded (``fit``, which training calls); its
vocabulary and IDF weights go to the artifact as JSON (``export_assets``), its projection into
``model.safetensors``, so loading runs no code and unpickles nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from faim.encoder import Encoder, Preprocessor
from faim.encoders.text_normalize import confusable_folder
from faim.encoders.text_preprocess import folding_identity
from faim.notices import warn
from faim.preprocess.folding import fold_texts
from faim.preprocess.ngrams import Family, NgramBags, analyzer, read_vocabulary, write_vocabulary
from faim.registry import register_encoder

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

VOCABULARY = "ngrams.json"
ARGUMENTS = {"char_wb": "char_ngrams", "word": "word_ngrams"}
"""The constructor argument (recipe key) that sets each n-gram family."""
NO_TERMS = ("empty vocabulary", "no terms remain")
"""What scikit-learn's ``CountVectorizer`` says when the texts hold no n-gram in ``min_df`` of them."""


class NgramFeatures:
    """Texts → TF-IDF weights of their n-grams as flat ``{"indices", "offsets", "weights"}`` tensors (one bag per text,
    for ``nn.EmbeddingBag``); picklable.

    Args:
        bags: The fitted families' bags (``faim.preprocess.ngrams``), homoglyphs folded first where the encoder folds.
    """

    def __init__(self, bags: NgramBags) -> None:
        self.bags = bags

    def matrix(self, texts: list[str]) -> csr_matrix:
        """The TF-IDF matrix ``[N, columns]``."""
        from scipy.sparse import csr_matrix  # heavy: loaded when first used

        indices, offsets, weights = self.bags(texts)
        return csr_matrix((weights, indices, [*offsets, len(indices)]), shape=(len(texts), self.bags.columns))

    def __call__(self, texts: list[str]) -> dict[str, torch.Tensor]:
        indices, offsets, weights = self.bags(texts)
        return {
            "indices": torch.from_numpy(indices),
            "offsets": torch.from_numpy(offsets),
            "weights": torch.from_numpy(weights),
        }


@register_encoder("ngram_text")
class NgramTextEncoder(Encoder):
    """TF-IDF of character and word n-grams projected by an SVD fitted on the training texts.

    Args:
        dim: Features kept by the SVD (the embedding's width).
        char_ngrams: Shortest and longest character n-gram, read within word boundaries; ``None``: none.
        word_ngrams: Shortest and longest word n-gram; ``None``: none.
        max_features: The most frequent n-grams each family keeps.
        min_df: N-grams in fewer training texts are dropped.
        vocabulary: The fitted vocabulary a saved model carries (``export_assets`` writes it); ``None``: fitted
            on the training texts by ``fit``.
        freeze: Kept for the encoder contract; the projection is fitted, not trained, unless ``False``.
        fold_confusables: Fold homoglyphs to the Latin letters they imitate before counting.
    """

    modality = "text"
    needs_fit = True
    asset_arguments = ("vocabulary",)

    def __init__(
        self,
        dim: int = 256,
        char_ngrams: Sequence[int] | None = (2, 5),
        word_ngrams: Sequence[int] | None = (1, 2),
        max_features: int = 20000,
        min_df: int = 2,
        vocabulary: str | None = None,
        freeze: bool = True,
        fold_confusables: bool = False,
    ) -> None:
        super().__init__()
        spans = [("char_wb", char_ngrams), ("word", word_ngrams)]
        self.spans = [(analyzer, tuple(span)) for analyzer, span in spans if span]
        if not self.spans:
            raise ValueError("ngram_text: char_ngrams and word_ngrams are both None; give at least one")
        self.dim, self.max_features, self.min_df = dim, max_features, min_df
        self.fold_confusables = fold_confusables
        self.output_dim = dim
        self.families: list[Family] = []
        self.projection = nn.EmbeddingBag(1, dim, mode="sum")
        if vocabulary is not None:
            self.load_vocabulary(Path(vocabulary))
        self.apply_freeze(freeze)

    @property
    def fitted(self) -> bool:
        return bool(self.families)

    def fit(self, elements: list[Any]) -> None:
        """Fit the vocabularies, IDF weights and SVD projection on the training texts (deterministic). A family that
        finds no n-gram in ``min_df`` texts is kept empty, with a ``FaimWarning``, where another finds some.

        Raises:
            ValueError: For fewer than two training texts, ``min_df`` above their number, or families that find
                fewer than two n-grams in all, naming the families' arguments and what to change.
        """
        from sklearn.decomposition import TruncatedSVD  # heavy: loaded when first used

        texts = fold_texts(list(elements), self.folder())
        if len(texts) < 2:
            raise ValueError(f"ngram_text: fitting needs at least two training texts, got {len(texts)}")
        if self.min_df > len(texts):
            raise ValueError(
                f"ngram_text: min_df is {self.min_df} but there are {len(texts)} training texts; an n-gram is kept "
                f"when it is in min_df of them: lower min_df to {len(texts)} or less"
            )
        families = [self.fit_family(name, span, texts) for name, span in self.spans]
        found = {f"{ARGUMENTS[name]} {list(span)}": len(vocabulary) for name, span, vocabulary, _ in families}
        if sum(found.values()) < 2:
            raise ValueError(
                f"ngram_text: {self.found(found)} in {self.min_df} or more of the {len(texts)} training texts, too "
                "few to embed texts by: lower min_df, or read n-grams the texts hold (emoji alone hold no word "
                "n-grams: set char_ngrams)"
            )
        for family in (family for family, terms in found.items() if not terms):
            warn(
                f"ngram_text: {family} found no n-gram in {self.min_df} or more of the {len(texts)} training texts; "
                "the texts are embedded by the other n-grams alone (lower min_df, or set it to null to read none)"
            )
        self.families = families
        matrix = NgramFeatures(NgramBags(self.families)).matrix(texts)
        components = min(self.dim, matrix.shape[1] - 1, matrix.shape[0] - 1)
        svd = TruncatedSVD(components, algorithm="randomized", random_state=0).fit(matrix)
        weight = np.zeros((matrix.shape[1], self.dim), dtype=np.float32)
        weight[:, :components] = svd.components_.T
        self.projection = nn.EmbeddingBag.from_pretrained(torch.from_numpy(weight), mode="sum", freeze=self.frozen)

    def fit_family(self, name: str, span: tuple[int, int], texts: list[str]) -> Family:
        """One family's vocabulary (the ``max_features`` n-grams in the most texts, each in ``min_df`` texts or more,
        none if none is) and IDF weights, fitted on ``texts`` (at least ``min_df`` of them)."""
        from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer  # heavy: loaded when first used

        counter = CountVectorizer(analyzer=analyzer(name, span), max_features=self.max_features, min_df=self.min_df)
        try:
            counts = counter.fit_transform(texts)
        except ValueError as error:
            if not any(found_none in str(error) for found_none in NO_TERMS):
                raise
            return name, span, {}, []
        idf = TfidfTransformer(sublinear_tf=True).fit(counts).idf_
        return name, span, {term: int(column) for term, column in counter.vocabulary_.items()}, idf.tolist()

    @staticmethod
    def found(terms: dict[str, int]) -> str:
        """``{"word_ngrams [1, 2]": 0, ...}`` (n-grams found per family) as ``"word_ngrams [1, 2] found no n-gram"``."""
        return ", ".join(f"{family} found {count or 'no'} n-gram{'s' * (count > 1)}" for family, count in terms.items())

    def folder(self) -> Any:
        """The homoglyph folding applied before counting (``None``: none)."""
        return confusable_folder() if self.fold_confusables else None

    def preprocessor(self) -> Preprocessor:
        if not self.fitted:
            raise RuntimeError("ngram_text is not fitted: training fits it on the training texts (call fit first)")
        return NgramFeatures(NgramBags(self.families, self.folder()))

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Project TF-IDF bags (``NgramFeatures``) to ``[N, dim]`` unit vectors."""
        n = inputs["offsets"].shape[0]
        if n == 0:
            return torch.zeros(0, self.dim, device=inputs["offsets"].device)
        dense = self.projection(inputs["indices"], inputs["offsets"], per_sample_weights=inputs["weights"])
        return dense / dense.norm(dim=-1, keepdim=True).clamp(min=1e-6)

    def identity(self) -> dict[str, Any]:
        state = json.dumps(self.families, sort_keys=True).encode() if self.fitted else b""
        return {  # the fitted projection is a weight: the cache keys it with the others (weights_digest)
            "class": type(self).__name__,
            "dim": self.dim,
            "spans": self.spans,
            "fitted": hashlib.sha256(state).hexdigest(),
        } | folding_identity(self.fold_confusables, False)

    def export_assets(self, directory: Path) -> dict[str, Any]:
        if not self.fitted:
            raise RuntimeError("ngram_text is not fitted; there is nothing to save")
        directory.mkdir(parents=True, exist_ok=True)
        write_vocabulary(self.families, directory / VOCABULARY)
        return {"vocabulary": str(directory / VOCABULARY)}

    def load_vocabulary(self, path: Path) -> None:
        """Read a saved vocabulary (``export_assets``) and size the projection for it (its weights come after)."""
        self.families = read_vocabulary(path)
        self.projection = nn.EmbeddingBag(NgramBags(self.families).columns, self.dim, mode="sum")
