"""Folding leetspeak to the words it imitates, as a word-level tokenizer reads them: a token becomes a whole word of
the vocabulary or stays; names, links, numbers, units and capital codes are kept; and through the text encoders'
preprocessing (tokens, pickling for DataLoader workers, embedding-cache identity)."""

from __future__ import annotations

import pickle
import random

import pytest
import torch
from transformers import BertTokenizer

from faim.encoders.text_preprocess import TextPreprocessor
from faim.encoders.tiny_text import TinyTextEncoder, tiny_vocab
from faim.perturb.text import LEET
from faim.preprocess import leetspeak
from faim.preprocess.leetspeak import DIGIT_LETTERS, LeetspeakFolder

WORDS = "hate kill them to if not the people should leave our country now covid am as is ed ah los sos ihr".split()
SUBWORDS = ["immigr", "##ants", "hat", "##es", "id", "ida", "be", "ba", "bam", "pray", "##a", "##nyc"]


@pytest.fixture(scope="module")
def tokenizer() -> BertTokenizer:
    """A word-level uncased BERT tokenizer: single characters and their continuations, plus a few words."""
    tokens = list(tiny_vocab()) + WORDS + SUBWORDS
    return BertTokenizer(vocab={token: index for index, token in enumerate(tokens)})


@pytest.fixture
def fold(tokenizer: BertTokenizer) -> LeetspeakFolder:
    return LeetspeakFolder(tokenizer)


def test_digits_inside_a_word_read_as_the_letters_the_vocabulary_knows(fold: LeetspeakFolder) -> None:
    assert fold("I h4t3 them, k1ll 7hem") == "I hate them, kill them"  # 1 reads as i or l: the word decides
    assert fold("7o, 1f n0t") == "to, if not"
    assert fold("H4TE") == "HATE"  # a shouted word folds to capitals


def test_a_token_folds_only_to_a_whole_word(fold: LeetspeakFolder) -> None:
    assert fold("immigr4nts hat35") == "immigr4nts hat35"  # immigr ##ants, hat ##es: fewer pieces, no word


def test_for_subword_vocabularies_a_token_folds_where_its_reading_takes_at_most_half_its_pieces(
    tokenizer: BertTokenizer,
) -> None:
    fold = LeetspeakFolder(tokenizer, subwords=True)
    # immigr4nts: five pieces, immigrants two; hat35: three pieces, hates two, not half
    assert fold("immigr4nts hat35") == "immigrants hat35"
    assert fold("I h4t3 them") == "I hate them"  # one piece still folds
    text = "covid19 at 10am, 2019 @h4t3r 3M B4 pray4NYC"
    assert fold(text) == text


def test_numbers_units_codes_names_and_links_are_kept(fold: LeetspeakFolder) -> None:
    text = "covid19 at 10am, 8am and 14st in 2019, 411 @h4t3r https://t.co/h4t3 www.k1ll.org 3M ID4 B4 pray4NYC"
    assert fold(text) == text
    assert fold("HTTPS://T.CO/h4t3 WWW.k1ll.ORG Http://x.co/k1ll") == "HTTPS://T.CO/h4t3 WWW.k1ll.ORG Http://x.co/k1ll"
    assert fold("4M") == "4M" and fold("4m") == "4m"  # "am" is a word, but 4m is four metres


def test_numbers_with_units_of_time_plurals_and_dimensions_are_kept(tokenizer: BertTokenizer) -> None:
    text = "3d printing, a 4h drive, wait 1s, got 4s, the 50s and the 10s, for 1hr, 4mins, 2yrs"
    assert LeetspeakFolder(tokenizer)(text) == text  # not "ed", "ah", "is", "as", "sos", "los"
    assert LeetspeakFolder(tokenizer, subwords=True)(text) == text  # not "ihr"


def test_a_digit_and_a_unit_letter_read_as_a_word_where_the_text_around_it_is_leetspeak(
    fold: LeetspeakFolder,
) -> None:
    assert fold("1s 7h3 4s") == "is the as"  # 7h3 folds, so the text is leetspeak: 1s is "is"
    assert fold("th1s 1s n0t 0k") == "th1s is not 0k"  # th1s, 0k: no word of the vocabulary
    assert fold("wait 1s, got 4s") == "wait 1s, got 4s"  # nothing else folds: seconds and fours
    assert fold("the 10s 7h3 50s") == "the 10s the 50s"  # two digits: a decade or ten seconds, still
    assert fold("@h4t3r 1s") == "@h4t3r 1s"  # a mention is not the text's wording
    assert fold(fold("1s 7h3 4s")) == fold("1s 7h3 4s")


@pytest.mark.parametrize("seed", range(5))
def test_the_leetspeak_perturbation_is_undone_for_words_of_the_vocabulary(fold: LeetspeakFolder, seed: int) -> None:
    from faim.perturb.text import leetspeak as perturb

    text = "hate the people kill the people should leave our country now"
    perturbed = perturb(text, random.Random(seed), 0.5)
    assert perturbed != text
    assert fold(perturbed) == text


def test_every_digit_of_the_perturbation_reads_back_as_its_letter() -> None:
    assert all(letter in DIGIT_LETTERS[digit] for letter, digit in LEET.items())


def test_the_memory_of_folded_tokens_stays_bounded(fold: LeetspeakFolder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leetspeak, "MEMO_SIZE", 2)
    assert fold("h4te k1ll n0w") == "hate kill now"
    assert len(fold._memo) <= 2


def test_the_preprocessor_tokenises_leetspeak_as_the_word_and_survives_pickling(tokenizer: BertTokenizer) -> None:
    folding = TextPreprocessor(tokenizer, 16, fold_leetspeak=True)
    plain = TextPreprocessor(tokenizer, 16)
    evasion, text = ["h4t3 th3 p3opl3"], ["hate the people"]
    assert torch.equal(folding(evasion)["input_ids"], plain(text)["input_ids"])
    assert not torch.equal(plain(evasion)["input_ids"], plain(text)["input_ids"])
    assert torch.equal(pickle.loads(pickle.dumps(folding))(evasion)["input_ids"], plain(text)["input_ids"])


def test_a_folding_encoder_keys_its_cache_apart() -> None:
    folding, plain = TinyTextEncoder(fold_leetspeak=True), TinyTextEncoder()
    assert folding.identity() == plain.identity() | {"fold_leetspeak": leetspeak.REVISION}
    assert folding.preprocessor().leetspeak is not None
