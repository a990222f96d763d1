"""N-gram bags with numpy alone give what scikit-learn's vectorizers give: the same n-grams, the same TF-IDF
weights, for texts with odd spacing, short words, digits, underscores and other scripts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from faim.preprocess.ngrams import NgramBags, analyzer, read_vocabulary, write_vocabulary

TEXTS = [
    "Those people H4T3 us!!  all of them",
    "a  b\tc\n\nd e_f g",
    "I",
    "",
    "   ",
    "ça va? Привет мир, 東京 2024 #tag @user http://x.co/ab_c",
    "aa aa aa aa bb",
    "x" * 7 + " " + "yz",
]


@pytest.mark.parametrize(
    ("name", "span"), [("char_wb", (2, 5)), ("char_wb", (1, 3)), ("word", (1, 2)), ("word", (2, 3))]
)
def test_each_family_reads_the_ngrams_scikit_learn_reads(name: str, span: tuple[int, int]) -> None:
    reference = CountVectorizer(analyzer=name, ngram_range=span, lowercase=True).build_analyzer()
    ours = analyzer(name, span)
    for text in TEXTS:
        assert sorted(ours(text)) == sorted(reference(text)), text


def test_bags_weigh_ngrams_as_scikit_learns_sublinear_tf_idf(tmp_path) -> None:
    families, reference = [], []
    for name, span in [("char_wb", (2, 4)), ("word", (1, 2))]:
        counter = CountVectorizer(analyzer=name, ngram_range=span)
        tfidf = TfidfTransformer(sublinear_tf=True).fit(counter.fit_transform(TEXTS))
        families.append((name, span, dict(counter.vocabulary_), tfidf.idf_.tolist()))
        reference.append(tfidf.transform(counter.transform(TEXTS)).toarray())
    expected = np.hstack(reference)

    bags = NgramBags(families)
    indices, offsets, weights = bags(TEXTS)
    got = np.zeros_like(expected)
    ends = [*offsets[1:], len(indices)]
    for row, (start, end) in enumerate(zip(offsets, ends)):
        got[row, indices[start:end]] = weights[start:end]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert offsets.dtype == indices.dtype == np.int64 and weights.dtype == np.float32
    sizes = np.diff([*offsets, len(indices)])
    assert sizes[TEXTS.index("")] == sizes[TEXTS.index("   ")] == 0 and bags.columns == expected.shape[1]

    write_vocabulary(families, tmp_path / "ngrams.json")
    again = NgramBags(read_vocabulary(tmp_path / "ngrams.json"))(TEXTS)
    for ours, read_back in zip((indices, offsets, weights), again):
        np.testing.assert_array_equal(ours, read_back)


def test_an_unknown_family_is_named() -> None:
    with pytest.raises(ValueError, match="'char' is not one of char_wb, word"):
        analyzer("char", (1, 2))
