"""The n-gram encoder: fitted on training texts, deterministic, robust to spelling evasion, saved without pickle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from faim.encoders.ngram_text import NgramTextEncoder
from faim.notices import FaimWarning

TEXTS = [
    "I hate those people, send them back",
    "they are vermin and should go home",
    "what a lovely day at the beach",
    "the match tonight was great fun",
    "stop the invasion of our country",
    "my cat sleeps all day long",
] * 10


def fitted(**arguments) -> NgramTextEncoder:
    encoder = NgramTextEncoder(dim=16, min_df=1, **arguments)
    encoder.fit(TEXTS)
    return encoder.eval()


def embed(encoder: NgramTextEncoder, texts: list[str]) -> np.ndarray:
    with torch.no_grad():
        return encoder(encoder.preprocessor()(texts)).numpy()


def test_fitting_is_deterministic_and_changes_the_identity() -> None:
    first, second = fitted(), fitted()
    assert first.identity() == second.identity()
    assert np.array_equal(embed(first, TEXTS[:3]), embed(second, TEXTS[:3]))
    other = NgramTextEncoder(dim=16, min_df=1)
    other.fit(TEXTS[:4] * 5)
    assert other.identity() != first.identity()


def test_leetspeak_keeps_most_of_a_texts_character_ngrams() -> None:
    encoder = fitted(word_ngrams=None)
    clean, evaded, unrelated = embed(encoder, ["I hate those people", "I h4te th0se pe0ple", "my cat sleeps all day"])
    assert clean @ evaded > 0.8 and clean @ evaded > clean @ unrelated + 0.3


def test_an_unfitted_encoder_says_so_before_reading_anything() -> None:
    with pytest.raises(RuntimeError, match="not fitted"):
        NgramTextEncoder().preprocessor()


def test_a_saved_vocabulary_rebuilds_the_same_encoder(tmp_path: Path) -> None:
    encoder = fitted(fold_confusables=True)
    overrides = encoder.export_assets(tmp_path)
    assert (tmp_path / "ngrams.json").read_text(encoding="utf-8").startswith('{"families"')
    rebuilt = NgramTextEncoder(dim=16, min_df=1, fold_confusables=True, **overrides)
    rebuilt.load_state_dict(encoder.state_dict())
    assert np.array_equal(embed(rebuilt.eval(), TEXTS[:4]), embed(encoder, TEXTS[:4]))


EMOJI = ["😀😀 🔥", "🔥🔥 😀", "😀 🙂", "🙂🙂 🔥"]


def test_a_family_finding_no_ngram_is_left_empty_with_a_warning_while_another_finds_some() -> None:
    encoder = NgramTextEncoder(dim=4)
    with pytest.warns(FaimWarning, match=r"^ngram_text: word_ngrams \[1, 2\] found no n-gram in 2 or more of the 4 "):
        encoder.fit(EMOJI)
    assert [len(vocabulary) for _, _, vocabulary, _ in encoder.families][1] == 0
    assert embed(encoder.eval(), ["🔥 😀", "a word"]).shape == (2, 4)


@pytest.mark.parametrize(
    ("arguments", "texts", "message"),
    [
        (
            {"char_ngrams": None},
            EMOJI,
            r"^ngram_text: word_ngrams \[1, 2\] found no n-gram in 2 or more of the 4 training texts, too few .*: "
            r"lower min_df, or read n-grams the texts hold",
        ),
        ({"min_df": 7}, TEXTS[:6], r"^ngram_text: min_df is 7 but there are 6 training texts; .* lower min_df to 6"),
    ],
)
def test_texts_holding_too_few_ngrams_are_refused_saying_what_to_change(arguments, texts, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NgramTextEncoder(dim=4, **arguments).fit(texts)
