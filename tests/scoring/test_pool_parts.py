"""Scoring a dump pooled by picture: the second pass gives what `Detector.score(pool_by_image=True)` gives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import pooling_detector, synced_and_renamed

from faim.eval.benchmark_runs import write_dump
from faim.scoring.engine import score_dump
from faim.scoring.manifest import PER_POST_DIR
from faim.scoring.options import ScoringOptions
from faim.scoring.pool_parts import PoolingReport, pool_parts


def harmful(row: dict) -> float:
    """P(harmful) of an output row or a ``Detector.score`` row, binary or multiclass."""
    value = row["harmful.harmful"] if "harmful.harmful" in row else row["harmful"]
    return value["harmful"] if isinstance(value, dict) else value


@pytest.fixture(params=["binary", "multiclass", "binary, weighing the crowd's corrections"])
def pooled_run(request, demo_data, tmp_path: Path) -> tuple:
    """A pooling detector, its posts, and their dump scored pooled in parts of 10 rows (groups span parts); in the
    third case some posts ask whether their picture is real and the pooled calibration weighs that."""
    detector, posts = pooling_detector(demo_data, tmp_path, request.param.split(",")[0])
    if "crowd" in request.param:
        detector.pooled.correction_weights = {"harmful": 1.0}
        for post in posts[1::7]:
            post.text = f"{post.text} is this real?"
    lost = json.dumps({"id": "lost-picture", "text": "look at this", "images": [str(tmp_path / "none.jpg")]})
    dump = write_dump(posts, tmp_path / "dump.jsonl")
    with dump.open("a", encoding="utf-8") as file:
        file.write("{not json\n" + lost + "\n")  # two rows that fail
    out = tmp_path / "out"
    summary = score_dump(
        detector, dump, out, workers=1, shard_rows=10, options=ScoringOptions.exact(), progress=False,
        pool_by_image=True,
    )  # fmt: skip
    return detector, posts, dump, out, summary


def test_pooled_dump_scores_equal_pooled_python_scores(pooled_run) -> None:
    detector, posts, _, out, summary = pooled_run
    table = pq.read_table(out)  # the per-post parts in _per_post are not read with the pooled ones
    assert table.num_rows == len(posts) + 2
    rows = {row["id"]: row for row in table.to_pylist() if row["error"] is None}
    expected = detector.score(posts, pool_by_image=True)
    assert [row["id"] for row in expected] == list(rows)
    assert max(abs(harmful(rows[row["id"]]) - harmful(row)) for row in expected) < 1e-5
    if detector.tasks[0].type == "binary":
        decisions = detector.decisions("harmful", np.array([row["harmful"] for row in expected]), pooled=True)
    else:
        decisions = np.array([harmful(row) > 0.5 for row in expected], dtype=int)
    assert [rows[row["id"]]["harmful.decision"] for row in expected] == [detector.tasks[0].labels[d] for d in decisions]
    pictured = [row for row, post in zip(expected, posts) if post.images]
    pairs = {(rows[row["id"]]["picture_group"], row["picture_group"]) for row in pictured}
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})  # the same partition of posts
    assert all(rows[post.id]["picture_group"] is None for post in posts if not post.images)
    sizes = np.bincount([rows[row["id"]]["picture_group"] for row in pictured])
    assert summary.pooling.posts == len(posts)
    assert summary.pooling.groups == int((sizes >= 2).sum()) > 0
    assert summary.pooling.grouped_posts == int(sizes[sizes >= 2].sum())
    assert "pooled by picture:" in summary.format()


def test_a_pooled_run_keeps_each_posts_own_scores_and_its_failed_rows(pooled_run) -> None:
    detector, posts, dump, out, _ = pooled_run
    per_post = {row["id"]: row for row in pq.read_table(out / PER_POST_DIR).to_pylist() if row["error"] is None}
    alone = {row["id"]: harmful(row) for row in detector.score(posts)}
    assert max(abs(harmful(per_post[key]) - value) for key, value in alone.items()) < 1e-5
    assert all(len(row["picture"]) == 16 for row in per_post.values() if row["picture"] is not None)
    failed = [row for row in pq.read_table(out).to_pylist() if row["error"] is not None]
    assert [row["source"] for row in failed] == [f"{dump}:{len(posts) + 1}", f"{dump}:{len(posts) + 2}"]
    assert [row["error_kind"] for row in failed] == ["json", "image_missing"]
    assert all(harmful(row) is None and row["picture_group"] is None for row in failed)


def test_rerunning_a_pooled_run_resumes_and_pools_again_and_overwriting_it_leaves_nothing(pooled_run) -> None:
    detector, _, dump, out, summary = pooled_run
    before = pq.read_table(out)
    again = score_dump(
        detector, dump, out, workers=1, shard_rows=10, options=ScoringOptions.exact(), progress=False,
        pool_by_image=True,
    )  # fmt: skip
    assert again.rows_this_run == 0 and again.resumed_shards == summary.shards
    assert pq.read_table(out).equals(before)
    with pytest.raises(ValueError, match=r"\(settings differ: pool_by_image true → \(not set\)\)"):
        score_dump(detector, dump, out, workers=1, shard_rows=10, options=ScoringOptions.exact(), progress=False)
    score_dump(detector, dump, out, workers=1, shard_rows=10, progress=False, overwrite=True)  # starts afresh
    assert "picture_group" not in pq.read_table(out).column_names
    assert not list((out / PER_POST_DIR).glob("part-*.parquet"))  # no part of the pooled run is left


def test_pooling_needs_a_pooling_model_and_scores(demo_data, tiny_model_dir, tmp_path: Path) -> None:
    dump = demo_data["validation"]
    with pytest.raises(ValueError, match="has no eval.pool_by_image"):
        score_dump(tiny_model_dir, dump, tmp_path / "out", workers=1, progress=False, pool_by_image=True)
    assert not (tmp_path / "out").exists()  # refused before anything was written
    detector, _ = pooling_detector(demo_data, tmp_path)
    detector.pooled = None
    with pytest.raises(ValueError, match="no calibration of pooled scores"):
        score_dump(detector, dump, tmp_path / "out", workers=1, progress=False, pool_by_image=True)
    with pytest.raises(ValueError, match="cannot be used when only embeddings"):
        score_dump(tiny_model_dir, dump, tmp_path / "out", scores=False, embeddings=True, pool_by_image=True)


def test_whole_post_embeddings_are_kept_by_the_pooled_parts(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    out = tmp_path / "out"
    dump = write_dump(posts[:20], tmp_path / "dump.jsonl")
    score_dump(detector, dump, out, workers=1, embeddings=True, progress=False, pool_by_image=True)
    pooled, per_post = pq.read_table(out), pq.read_table(out / PER_POST_DIR)
    assert pooled.column("embedding").equals(per_post.column("embedding"))
    assert len(pooled.column("embedding")[0].as_py()) == 32


def test_per_post_parts_without_what_pooling_reads_are_named_not_misread(pooled_run, tmp_path: Path) -> None:
    detector, _, _, out, _ = pooled_run
    part = sorted((out / PER_POST_DIR).glob("part-*.parquet"))[0]
    pq.write_table(pq.read_table(part).drop_columns(["corrects"]), part)  # as an earlier faim wrote it
    with pytest.raises(ValueError, match=rf"{part.name}: a per-post part without the 'corrects' column .*--overwrite"):
        pool_parts(detector, out / PER_POST_DIR, tmp_path / "pooled", progress=False)


def test_the_pooling_summary_counts_its_posts_as_words() -> None:
    assert PoolingReport(posts=1).format() == "pooled by picture: 0 of 1 post share a picture, in 0 groups (0.0 s)"
    report = PoolingReport(posts=160, groups=40, grouped_posts=128)
    assert report.format() == "pooled by picture: 128 of 160 posts share a picture, in 40 groups (0.0 s)"


def test_each_pooled_part_is_on_the_disk_before_its_name_and_their_names_once_pooling_ends(
    pooled_run, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the folder was synced after each part's rename: nothing records the pooling done, a rerun pools again
    detector, _, _, out, _ = pooled_run
    done = synced_and_renamed(monkeypatch)
    pool_parts(detector, out / PER_POST_DIR, out, progress=False)
    parts = sorted(out.glob("part-*.parquet"))
    folder = ("fsync", out.stat().st_ino)
    assert done == [step for part in parts for step in (("fsync", part.stat().st_ino), ("replace", part.name))] + [
        folder
    ]
