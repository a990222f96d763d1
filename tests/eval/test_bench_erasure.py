"""The erasure check: erasing the pieces an explanation ranks highest takes the most off the score of a model that
rests on a planted trigger word; a text encoder without token attributions is passed over; the saved-model path
checks the positive validation posts of the task asked for and names the tasks when that one is not there."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from token_pieces import attributed_names
from trigger_models import (
    TASK,
    TEXT_ENCODERS,
    detector,
    ngram_model,
    stacked_model,
    trained_on_trigger,
    trigger_posts,
)

from faim.data.post import as_posts
from faim.data.sources import read_posts
from faim.detector import Detector
from faim.eval.bench_erasure import WAYS, erasure_falls, measure, validation_posts


@pytest.mark.parametrize("encoder", sorted(TEXT_ENCODERS))
def test_erasing_the_highest_attributed_pieces_takes_the_most_off_a_trigger_models_score(encoder: str) -> None:
    trained = trained_on_trigger(encoder)
    collate = trained.collator()
    # 24 posts: a tiny random model's attributions of a post or two go astray, more or fewer by the CPU's arithmetic
    posts = [post for post in trigger_posts(80, seed=7) if post["labels"]["harm"]][:24]
    readings = [erasure_falls(trained.model, collate(as_posts([p])), TASK, 0.2, 5, random.Random(0)) for p in posts]
    assert [[reader for reader, _ in falls] for falls in readings] == [[encoder]] * 24
    falls = [fall for ((_, fall),) in readings]
    assert all(fall["erased"] >= 1 for fall in falls)
    highest, drawn, lowest = ([fall[way] for fall in falls] for way in WAYS)
    assert sum(h > r for h, r in zip(highest, drawn)) >= 16, falls  # a ranking no better than chance wins about 12
    assert sum(highest) / 24 > sum(drawn) / 24 + 1.0 and sum(lowest) < sum(drawn), falls


def test_a_text_too_short_to_rank_gives_no_figures_and_a_share_of_none_or_all_is_refused() -> None:
    trained = trained_on_trigger("tiny_text")
    batch = trained.collator()(as_posts([{"id": "short", "text": "z"}]))
    assert erasure_falls(trained.model, batch, TASK, 0.2, 5, random.Random(0)) == []
    for fraction, draws in ((0.0, 5), (1.0, 5), (0.2, 0)):
        with pytest.raises(ValueError, match="fraction above 0 and below 1 and a draw or more"):
            erasure_falls(trained.model, batch, TASK, fraction, draws, random.Random(0))


def test_each_member_of_a_stack_reading_pieces_is_checked_on_its_own_pieces() -> None:
    model = stacked_model()
    batch = detector(model).collator()(as_posts([{"id": "p", "text": "abc z hd bb ce"}]))
    falls = erasure_falls(model, batch, TASK, 0.2, 5, random.Random(0))
    pieces = [len(attributed_names(member, "abc z hd bb ce")) for member in model.encoder_for("text").members[::2]]
    assert [(reader, fall["pieces"]) for reader, fall in falls] == list(
        zip(["tiny_text, 1 of 3", "tiny_use, 3 of 3"], pieces)
    )
    assert pieces[0] != pieces[1]


def test_a_text_encoder_without_token_attributions_gives_no_figures() -> None:
    model, posts = ngram_model()
    batch = detector(model).collator()(as_posts(posts[:1]))
    assert erasure_falls(model, batch, TASK, 0.2, 5, random.Random(0)) == []


def test_a_saved_model_is_checked_on_the_positive_posts_of_its_task_and_says_what_it_lacks(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path
) -> None:
    posts = list(read_posts(demo_data["validation"], {"labels": {"harmful": "label"}}))
    figures = measure(str(tiny_model_dir), posts, None, count=6, fraction=0.25, draws=2, seed=0)
    assert figures["task"] == "harmful" and figures["posts"] == figures["readings"] == 6 and figures["passed_over"] == 0
    assert [reading[WAYS[0]] for reading in figures["by_reader"].values()] == [figures[WAYS[0]]]  # one encoder
    assert figures["posts"] >= 1 and figures["pieces"] > figures["erased"] >= 1 and set(WAYS) <= set(figures)
    with pytest.raises(SystemExit, match=r"no binary task nope to check \(binary tasks: harmful\)"):
        measure(str(tiny_model_dir), posts, "nope", count=6, fraction=0.25, draws=2, seed=0)
    unlabelled = list(read_posts(demo_data["validation"]))
    with pytest.raises(SystemExit, match=r"no post has a label for harmful \(name its column: --map labels.harmful="):
        measure(str(tiny_model_dir), unlabelled, None, count=6, fraction=0.25, draws=2, seed=0)
    negative = [post for post in posts if post.labels["harmful"] in (0, "0", "benign")]
    with pytest.raises(SystemExit, match="none of the posts is labelled positive for harmful"):
        measure(str(tiny_model_dir), negative, None, count=6, fraction=0.25, draws=2, seed=0)
    composed = Detector.load(tiny_model_dir)
    Detector(composed.model, composed.tasks).save(tmp_path / "composed")  # in code: its recipe names no data
    with pytest.raises(SystemExit, match="no validation posts to take .*give labelled posts with --data"):
        validation_posts(str(tmp_path / "composed"))
