"""meta_numeric: numeric ``Post.meta`` fields as features, their checks, and partly cached training batches."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

import faim
from faim.data.elements import PostError
from faim.data.post import Post
from faim.encoders import meta_numeric
from faim.encoders.meta_numeric import MetaFeatures, MetaNumericEncoder
from faim.notices import FaimWarning
from faim.recipe import RecipeError
from faim.scoring.engine import score_dump
from faim.training.loaders import make_loader


def test_features_are_log_counts_missing_flags_and_shares() -> None:
    features = MetaFeatures(["a", "b"], shares=True)([{"a": 3, "b": 1}, {"a": None}])
    assert features.shape == (2, features.shape[1]) and features.shape[1] == MetaFeatures(["a", "b"], True).num_features
    expected = [math.log1p(3), math.log1p(1), 0, 0, 0.75, 0.25, math.log1p(4)]
    assert torch.allclose(features[0], torch.tensor(expected))
    assert features[1].tolist() == [0, 0, 1, 1, 0, 0, 0]


def test_no_posts_give_an_empty_feature_matrix() -> None:
    encoder = MetaNumericEncoder(["a"], dim=4)
    assert encoder(encoder.preprocessor()([])).shape == (0, 4)


def test_an_encoder_needs_fields() -> None:
    with pytest.raises(ValueError, match="fields"):
        MetaNumericEncoder([])


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        (["likes", "lang"], "1 field 'lang': faim fills it itself"),
        (["source", "lang"], "2 fields 'source', 'lang': faim fills these itself"),
    ],
)
def test_a_field_faim_fills_itself_is_refused_naming_where_why_and_what_to_do(
    fields: list[str], named: str, tmp_path: Path
) -> None:
    section = recipe(tmp_path, freeze_text=False)
    section["model"]["encoders"]["meta"]["fields"] = fields
    with pytest.raises(RecipeError) as refused:
        faim.build(section)
    it = "they are" if "these" in named else "it is"
    assert str(refused.value) == (
        f"<dict>: model.encoders.meta: meta_numeric: {named} (concat data names each post's source in meta.source, "
        f"language identification gives meta.lang), so {it} not a post's own metadata; read the column under another "
        "meta name (data.columns: {meta: {NAME: COLUMN}}) and list that name in fields"
    )


def test_a_model_saved_before_such_fields_were_refused_loads_with_a_warning_and_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = recipe(tmp_path, freeze_text=False)
    section["model"]["encoders"]["meta"]["fields"] = ["count", "lang"]
    with monkeypatch.context() as before:  # built and saved as faim did before it refused the field
        before.setattr(meta_numeric, "check_own_fields", lambda fields: None)
        faim.build(section).save(tmp_path / "model")
    with pytest.warns(FaimWarning) as warned:
        detector = faim.load(tmp_path / "model")
    assert [str(warning.message) for warning in warned] == [
        f"{tmp_path / 'model'}: meta_numeric: 1 field 'lang': faim fills it itself (concat data names each post's "
        "source in meta.source, language identification gives meta.lang), so it is not a post's own metadata: this "
        "model refuses as empty a post whose metadata holds nothing else"
    ]
    (row,) = detector.score([{"id": "a", "text": "x", "meta": {"count": 2, "lang": 1}}])
    assert row["id"] == "a" and 0 <= row["fake"] <= 1
    with pytest.raises(PostError) as refused:
        detector.score([{"id": "b", "meta": {"lang": 1}}])
    assert refused.value.kind == "empty"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        detector.save(tmp_path / "again")  # checked as it loads again, which alone warns


def recipe(tmp_path: Path, freeze_text: bool) -> dict:
    return {
        "data": {"type": "jsonl", "train": str(tmp_path / "unused.jsonl")},
        "model": {
            "encoders": {
                "text": {"type": "tiny_text", "dim": 16, "freeze": freeze_text},
                "meta": {"type": "meta_numeric", "fields": ["count"], "dim": 8},
            },
            "fusion": {"type": "concat"},
            "heads": {"fake": {"type": "binary", "labels": ["real", "fake"]}},
        },
        "train": {"output_dir": str(tmp_path / "run")},
    }


def test_a_non_numeric_field_is_reported_with_its_post(tmp_path: Path) -> None:
    detector = faim.build(recipe(tmp_path, freeze_text=False))
    post = Post(id="p7", text="hello", meta={"count": "many"}, origin="data.tsv:7")
    with pytest.raises(PostError, match=r"data.tsv:7 \(post id='p7'\) field 'meta'.*'count'.*'many'"):
        detector.collator()([post])


@pytest.mark.parametrize("value", [math.inf, -math.inf, np.float32("inf"), 10**400])
def test_a_field_that_is_not_a_finite_number_is_reported_with_its_post(value: float, tmp_path: Path) -> None:
    detector = faim.build(recipe(tmp_path, freeze_text=False))
    post = Post(id="p7", text="hello", meta={"count": value}, origin="data.tsv:7")
    with pytest.raises(PostError, match=r"data.tsv:7 \(post id='p7'\) field 'meta': meta field 'count' must be finite"):
        detector.collator()([post])


def test_numpy_numbers_are_read_as_the_numbers_they_hold() -> None:
    features = MetaFeatures(["a", "b"], shares=True)
    assert torch.equal(features([{"a": np.int64(3), "b": np.float32(1.0)}]), features([{"a": 3, "b": 1.0}]))
    with pytest.raises(ValueError, match=r"meta field 'a' must be a number or missing, got np.True_"):
        features([{"a": np.bool_(True)}])


def test_fields_whose_shares_sum_beyond_a_float_are_refused_and_missing_ones_are_not() -> None:
    features = MetaFeatures(["a", "b"], shares=True)
    with pytest.raises(ValueError, match=r"meta fields 'a', 'b' sum to more than a float holds"):
        features([{"a": 1e308, "b": 1e308}])
    assert torch.isfinite(features([{"a": math.nan, "b": 1e308}, {"a": None, "b": -1e308}])).all()


def test_a_row_whose_field_is_not_finite_is_scored_as_an_error_of_its_own(tmp_path: Path) -> None:
    faim.build(recipe(tmp_path, freeze_text=False)).save(str(tmp_path / "model"))
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"id": "a", "text": "x", "count": 2}\n{"id": "b", "text": "x", "count": Infinity}\n')
    score_dump(tmp_path / "model", dump, tmp_path / "out", columns={"meta": ["count"]}, workers=1, progress=False)
    rows = {row["id"]: row for row in pq.read_table(tmp_path / "out").to_pylist()}
    assert rows["a"]["error_kind"] is None and rows["a"]["fake"] is not None
    assert rows["b"]["error_kind"] == "meta" and "meta field 'count' must be finite" in rows["b"]["error"]
    assert rows["b"]["fake"] is None


def test_frozen_text_is_cached_while_the_meta_encoder_trains(tmp_path: Path) -> None:
    detector = faim.build(recipe(tmp_path, freeze_text=True))
    posts = [Post(id=str(i), text=f"post {i}", meta={"count": i}, labels={"fake": i % 2}) for i in range(12)]
    collator = detector.collator(with_targets=True)
    loader = make_loader(detector.model, collator, posts, 5, False, cache_dir=tmp_path / "cache")
    assert len(list((tmp_path / "cache").glob("*.safetensors"))) == 1  # text only
    cached = next(iter(loader))
    live = collator(posts[:5])
    assert cached.elements["text"].encoded and not cached.elements["meta"].encoded
    assert torch.equal(cached.elements["meta"].values, live.elements["meta"].values)
    with torch.no_grad():
        assert torch.allclose(detector.model(cached)["fake"], detector.model(live)["fake"], atol=1e-5)
