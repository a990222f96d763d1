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
from typing import Any

import numpy as np
import torch
from scipy.sparse import hstack
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from torch import nn

from faim.encoder import Encoder, Preprocessor
from faim.encoders.text_normalize import fold_confusables
from faim.registry import register_encoder

VOCABULARY = "ngrams.json"


class NgramFeatures:
    """Texts → TF-IDF weights of their n-grams as flat ``{"indices", "offsets", "weights"}`` (one bag per text, for
    ``nn.EmbeddingBag``); picklable.

    Args:
        families: Per n-gram family, ``(analyzer, (low, high), vocabulary, idf)``: ``"char_wb"`` or ``"word"``, the
            n-gram lengths, term → column and the IDF weight of each column; the families' columns follow each other.
        fold: Fold homoglyphs to the Latin letters they imitate first (``faim.encoders.text_normalize``).
    """

    def __init__(self, families: list[tuple[str, tuple[int, int], dict[str, int], list[float]]], fold: bool) -> None:
        self.families = families
        self.fold = fold
        self.counters = [
            CountVectorizer(analyzer=analyzer, ngram_range=tuple(span), vocabulary=vocabulary, lowercase=True)
            for analyzer, span, vocabulary, _ in families
        ]
        self.transformers = [TfidfTransformer(sublinear_tf=True) for _ in families]
        for transformer, (_, _, _, idf) in zip(self.transformers, families):
            transformer.idf_ = np.asarray(idf)

    def matrix(self, texts: list[str]) -> Any:
        """The TF-IDF matrix ``[N, columns]`` (scipy CSR)."""
        if self.fold:
            texts = [fold_confusables(text) for text in texts]
        parts = [tfidf.transform(count.transform(texts)) for count, tfidf in zip(self.counters, self.transformers)]
        return hstack(parts).tocsr()

    def __call__(self, texts: list[str]) -> dict[str, torch.Tensor]:
        if not texts:
            nothing = torch.zeros(0, dtype=torch.long)
            return {"indices": nothing, "offsets": nothing.clone(), "weights": torch.zeros(0)}
        matrix = self.matrix(texts)
        return {
            "indices": torch.from_numpy(matrix.indices.astype(np.int64)),
            "offsets": torch.from_numpy(matrix.indptr[:-1].astype(np.int64)),
            "weights": torch.from_numpy(matrix.data.astype(np.float32)),
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
        self.families: list[tuple[str, tuple[int, int], dict[str, int], list[float]]] = []
        self.projection = nn.EmbeddingBag(1, dim, mode="sum")
        if vocabulary is not None:
            self.load_vocabulary(Path(vocabulary))
        self.apply_freeze(freeze)

    @property
    def fitted(self) -> bool:
        return bool(self.families)

    def fit(self, elements: list[Any]) -> None:
        """Fit the vocabularies, IDF weights and SVD projection on the training texts (deterministic)."""
        texts = [fold_confusables(t) for t in elements] if self.fold_confusables else list(elements)
        if len(texts) < 2:
            raise ValueError(f"ngram_text: fitting needs at least two training texts, got {len(texts)}")
        families = []
        for analyzer, span in self.spans:
            counter = CountVectorizer(
                analyzer=analyzer, ngram_range=span, max_features=self.max_features, min_df=self.min_df
            )
            idf = TfidfTransformer(sublinear_tf=True).fit(counter.fit_transform(texts)).idf_
            vocabulary = {term: int(column) for term, column in counter.vocabulary_.items()}
            families.append((analyzer, span, vocabulary, idf.tolist()))
        self.families = families
        matrix = NgramFeatures(self.families, False).matrix(texts)
        components = min(self.dim, matrix.shape[1] - 1, matrix.shape[0] - 1)
        svd = TruncatedSVD(components, algorithm="randomized", random_state=0).fit(matrix)
        weight = np.zeros((matrix.shape[1], self.dim), dtype=np.float32)
        weight[:, :components] = svd.components_.T
        self.projection = nn.EmbeddingBag.from_pretrained(torch.from_numpy(weight), mode="sum", freeze=self.frozen)

    def preprocessor(self) -> Preprocessor:
        if not self.fitted:
            raise RuntimeError("ngram_text is not fitted: training fits it on the training texts (call fit first)")
        return NgramFeatures(self.families, self.fold_confusables)

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Project TF-IDF bags (``NgramFeatures``) to ``[N, dim]`` unit vectors."""
        n = inputs["offsets"].shape[0]
        if n == 0:
            return torch.zeros(0, self.dim, device=inputs["offsets"].device)
        dense = self.projection(inputs["indices"], inputs["offsets"], per_sample_weights=inputs["weights"])
        return dense / dense.norm(dim=-1, keepdim=True).clamp(min=1e-6)

    def identity(self) -> dict[str, Any]:
        state = json.dumps(self.families, sort_keys=True).encode() if self.fitted else b""
        weight = self.projection.weight.detach().numpy().tobytes() if self.fitted else b""
        return {
            "class": type(self).__name__,
            "dim": self.dim,
            "spans": self.spans,
            "fitted": hashlib.sha256(state + weight).hexdigest(),
        } | ({"fold_confusables": True} if self.fold_confusables else {})

    def export_assets(self, directory: Path) -> dict[str, Any]:
        if not self.fitted:
            raise RuntimeError("ngram_text is not fitted; there is nothing to save")
        directory.mkdir(parents=True, exist_ok=True)
        families = [
            {"analyzer": a, "ngrams": list(span), "terms": sorted(vocab, key=vocab.get), "idf": idf}
            for a, span, vocab, idf in self.families
        ]
        (directory / VOCABULARY).write_text(json.dumps({"families": families}, ensure_ascii=False), encoding="utf-8")
        return {"vocabulary": str(directory / VOCABULARY)}

    def load_vocabulary(self, path: Path) -> None:
        """Read a saved vocabulary (``export_assets``) and size the projection for it (its weights come after)."""
        stored = json.loads(path.read_text(encoding="utf-8"))["families"]
        self.families = [
            (f["analyzer"], tuple(f["ngrams"]), {term: i for i, term in enumerate(f["terms"])}, f["idf"])
            for f in stored
        ]
        columns = sum(len(f["terms"]) for f in stored)
        self.projection = nn.EmbeddingBag(columns, self.dim, mode="sum")
