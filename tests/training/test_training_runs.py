"""Training mechanics: cached frozen embeddings, resume after an interruption, DDP on 2 CPU processes, bf16."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import pytorch_lightning as pl
import safetensors
import safetensors.torch
import torch
import yaml
from conftest import refused_source_recipe, tiny_recipe
from pytorch_lightning.accelerators import XLAAccelerator
from pytorch_lightning.strategies import DDPStrategy, SingleDeviceStrategy
from torch.utils.data import WeightedRandomSampler

import faim
from faim.api import evaluate_run
from faim.api import train_recipe as train
from faim.assembly import build_source, recipe_fused_kinds, task_specs
from faim.calibration.fit import Calibration, source_class_weights
from faim.calibration.thresholds import choose_threshold
from faim.cli.common import resume_command
from faim.cli.main import main
from faim.data.elements import PostError, warn_overfull_splits
from faim.data.post import Post
from faim.data.sources import JsonlSource
from faim.data.targets import TaskSpec
from faim.eval.evaluate import evaluate
from faim.inference import predict
from faim.notices import FaimWarning
from faim.recipe import RecipeError, as_recipe
from faim.training.cache import cached_embeddings
from faim.training.loaders import CachedCollator
from faim.training.run import (
    RECORD,
    RESUME_CALL,
    check_learnable,
    make_trainer,
    recipe_loader,
    stopped_run,
    undefined_auroc,
    warn_temperature_edges,
    warn_uncalibrated,
    warn_undefined_auroc,
    warn_workers_idle,
)


def frozen(recipe: dict) -> dict:
    for spec in recipe["model"]["encoders"].values():
        if isinstance(spec, dict):
            spec["freeze"] = True
    return recipe


def test_frozen_encoders_are_embedded_once_and_cached(demo_data, tmp_path: Path) -> None:
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run", max_epochs=1))
    train(recipe)
    cached = sorted((tmp_path / "run" / "cache").glob("*.safetensors"))
    assert len(cached) == 6  # train and validation, each kind (comments, image, text) in its own file
    stamps = [p.stat().st_ino for p in cached]  # a file written again is a new one; reading one marks it used
    recipe["train"]["output_dir"] = str(tmp_path / "run2")
    recipe["train"]["cache_dir"] = str(tmp_path / "run" / "cache")
    train(recipe | {"model": recipe["model"] | {"fusion": {"type": "concat"}}})
    assert [p.stat().st_ino for p in sorted((tmp_path / "run" / "cache").glob("*.safetensors"))] == stamps


def test_a_seeded_run_trains_the_same_model_whether_or_not_its_embeddings_were_cached(
    demo_data, tmp_path: Path
) -> None:
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "cold", max_epochs=2))
    recipe["train"]["cache_dir"] = str(tmp_path / "cache")
    cold = train(recipe)  # embeds the posts and writes the cache
    recipe["train"]["output_dir"] = str(tmp_path / "warm")
    warm = train(recipe)  # reads the cache
    assert cold is not None and warm is not None
    source = build_source(recipe["data"])
    posts = len(source.posts("train")) + len(source.posts("validation"))
    records = [json.loads((tmp_path / run / RECORD).read_text(encoding="utf-8")) for run in ("cold", "warm")]
    assert [record["posts_encoded"] for record in records] == [posts, 0]
    cold_state, warm_state = cold.detector.model.state_dict(), warm.detector.model.state_dict()
    assert all(torch.equal(cold_state[name], warm_state[name]) for name in cold_state)


def test_embedding_for_the_cache_leaves_every_modules_mode_and_the_random_state_as_they_were(
    demo_data, tmp_path: Path
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")  # encoders that train: embedding puts them in eval mode
    detector = faim.build(recipe)
    detector.model.train()
    posts = build_source(recipe["data"]).posts("validation")[:20]
    state = torch.random.get_rng_state()
    cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache")
    assert all(module.training for module in detector.model.modules())
    assert torch.equal(torch.random.get_rng_state(), state)


def test_a_model_sharing_an_encoder_reuses_its_cached_embeddings(demo_data, tmp_path: Path) -> None:
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run"))
    posts = build_source(recipe["data"]).posts("validation")[:20]
    torch.manual_seed(0)  # both models draw the text encoder's random weights alike: it is the same encoder
    detector = faim.build(recipe)
    cache = cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache")
    written = {p: p.stat().st_ino for p in (tmp_path / "cache").glob("*.safetensors")}
    assert len(written) == 3
    del recipe["model"]["encoders"]["image"]
    torch.manual_seed(0)
    text_only = faim.build(recipe)
    reused = cached_embeddings(text_only.model, text_only.collator(), posts, tmp_path / "cache")
    assert {p: p.stat().st_ino for p in (tmp_path / "cache").glob("*.safetensors")} == written
    assert reused.kinds == ["comments", "text"]
    assert torch.equal(reused.tensors["text.values"], cache.tensors["text.values"])


def test_posts_cached_in_other_lists_are_taken_from_them_and_only_the_rest_encoded(
    demo_data, tmp_path: Path, monkeypatch
) -> None:
    import faim.training.cache as cache_module

    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run"))
    del recipe["model"]["encoders"]["image"], recipe["model"]["encoders"]["comments"]
    detector = faim.build(recipe)
    posts = [  # distinct texts: posts with the same text share their rows
        replace(post, text=f"{post.text} {n}")
        for n, post in enumerate(build_source(recipe["data"]).posts("validation")[:30])
    ]
    first = cached_embeddings(detector.model, detector.collator(), posts[:12], tmp_path / "cache")
    second = cached_embeddings(detector.model, detector.collator(), posts[12:20], tmp_path / "cache")
    encoded = []
    compute = cache_module.compute_embeddings
    monkeypatch.setattr(
        cache_module, "compute_embeddings", lambda parts, c, ps, *a: encoded.extend(ps) or compute(parts, c, ps, *a)
    )
    together = posts[15:30] + posts[:5]  # rows from both files, in a new order, and ten posts never encoded
    joined = cached_embeddings(detector.model, detector.collator(), together, tmp_path / "cache")
    assert [post.id for post in encoded] == [post.id for post in posts[20:30]]
    assert (first.encoded, second.encoded, joined.encoded) == (12, 8, 10)
    assert cached_embeddings(detector.model, detector.collator(), together, tmp_path / "cache").encoded == 0
    fresh = cached_embeddings(detector.model, detector.collator(), together, tmp_path / "fresh")
    assert torch.equal(joined.tensors["text.counts"], fresh.tensors["text.counts"])
    assert torch.allclose(joined.tensors["text.values"], fresh.tensors["text.values"], atol=1e-6)
    assert torch.equal(joined.tensors["text.values"][:5], second.tensors["text.values"][3:8])
    assert torch.equal(joined.tensors["text.values"][15:], first.tensors["text.values"][:5])


def frozen_text_model(demo_data, tmp_path: Path, count: int) -> tuple[faim.Detector, list]:
    """A model reading the text alone with a frozen encoder, and ``count`` validation posts of distinct texts (posts
    with the same text share their rows)."""
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run"))
    del recipe["model"]["encoders"]["image"], recipe["model"]["encoders"]["comments"]
    posts = build_source(recipe["data"]).posts("validation")[:count]
    return faim.build(recipe), [replace(post, text=f"{post.text} {n}") for n, post in enumerate(posts)]


def counting_batches(batches: list[int], stop: int | None = None):
    """A forward pre-hook noting in ``batches`` the size of each batch an encoder is given, and interrupting the
    ``stop``-th as Ctrl-C would."""

    def hook(module, inputs) -> None:
        batches.append(len(inputs[0]))
        if len(batches) == stop:
            raise KeyboardInterrupt

    return hook


def test_embedding_interrupted_keeps_the_chunks_it_finished_and_the_next_run_encodes_only_the_rest(
    demo_data, tmp_path: Path, monkeypatch
) -> None:
    import faim.training.cache as cache_module

    monkeypatch.setattr(cache_module, "CHUNK_SECONDS", 0.0)  # a chunk after every batch
    detector, posts = frozen_text_model(demo_data, tmp_path, 30)  # in batches of 7, 7, 7, 7 and 2
    batches: list[int] = []
    hook = detector.model.encoder_for("text").register_forward_pre_hook(counting_batches(batches, stop=3))
    with pytest.raises(KeyboardInterrupt):
        cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache", batch_size=7)
    hook.remove()
    batches.clear()
    hook = detector.model.encoder_for("text").register_forward_pre_hook(counting_batches(batches))
    resumed = cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache", batch_size=7)
    assert (len(batches), resumed.encoded) == (3, 16)  # the two batches finished are read, not encoded again
    hook.remove()
    whole = cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "fresh", batch_size=7)
    assert whole.encoded == 30
    for name, tensor in whole.tensors.items():
        assert torch.equal(resumed.tensors[name], tensor), name
    # once whole, each cache is its one file (the chunks removed), and the files hold the same
    files = [next(iter((tmp_path / folder).iterdir())) for folder in ("cache", "fresh")]
    assert [len(list(file.parent.iterdir())) for file in files] == [1, 1]
    assert files[0].name == files[1].name
    resumed_file, whole_file = (safetensors.safe_open(str(file), framework="pt") for file in files)
    assert resumed_file.metadata() == whole_file.metadata()
    assert all(torch.equal(resumed_file.get_tensor(name), whole_file.get_tensor(name)) for name in whole_file.keys())


def test_chunks_another_process_removes_while_they_are_read_are_encoded_instead(
    demo_data, tmp_path: Path, monkeypatch
) -> None:
    import faim.training.cache as cache_module

    monkeypatch.setattr(cache_module, "CHUNK_SECONDS", 0.0)
    detector, posts = frozen_text_model(demo_data, tmp_path, 20)
    hook = detector.model.encoder_for("text").register_forward_pre_hook(counting_batches([], stop=3))
    with pytest.raises(KeyboardInterrupt):
        cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache", batch_size=7)
    hook.remove()
    assert len(list((tmp_path / "cache").glob("*.part-*.safetensors"))) == 2
    load_file = safetensors.torch.load_file

    def removed_first(path: str, *args, **kwargs):  # another run has just made the file whole and removed its chunks
        if ".part-" in path:
            Path(path).unlink()
        return load_file(path, *args, **kwargs)

    monkeypatch.setattr(safetensors.torch, "load_file", removed_first)
    cache = cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache", batch_size=7)
    monkeypatch.undo()
    assert cache.encoded == 20
    fresh = cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "fresh", batch_size=7)
    assert torch.equal(cache.tensors["text.values"], fresh.tensors["text.values"])


def test_a_cache_file_whose_writing_is_stopped_leaves_nothing_behind(demo_data, tmp_path: Path, monkeypatch) -> None:
    import faim.training.cache as cache_module

    detector, posts = frozen_text_model(demo_data, tmp_path, 10)
    save_file = safetensors.torch.save_file

    def stopped(tensors, path: str, metadata=None) -> None:  # Ctrl-C while the file is half written
        save_file(tensors, path, metadata=metadata)
        raise KeyboardInterrupt

    monkeypatch.setattr(cache_module.safetensors.torch, "save_file", stopped)
    with pytest.raises(KeyboardInterrupt):
        cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache", batch_size=7)
    assert list((tmp_path / "cache").iterdir()) == []


def test_pictures_put_in_place_again_recompute_their_embeddings_and_no_others(demo_data, tmp_path: Path) -> None:
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run"))
    posts = build_source(recipe["data"]).posts("validation")[:20]
    detector = faim.build(recipe)
    cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache")
    before = {p.name: p.stat().st_ino for p in (tmp_path / "cache").glob("*.safetensors")}
    for post in posts:  # the same pictures, copied in again: new modification times
        for ref in post.images:
            path = Path(ref) if post.image_root is None else post.image_root / ref
            os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    cache = cached_embeddings(detector.model, detector.collator(), posts, tmp_path / "cache")
    after = {p.name: p.stat().st_ino for p in (tmp_path / "cache").glob("*.safetensors")}
    assert len(after) == len(before) + 1  # the pictures' embeddings under a new key
    assert {name: stamp for name, stamp in after.items() if name in before} == before  # text, comments kept
    assert cache.kinds == ["comments", "image", "text"]


def test_cached_batches_equal_encoding_on_the_fly(demo_data, tmp_path: Path) -> None:
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run"))
    detector = faim.build(recipe)
    posts = build_source(recipe["data"]).posts("validation")[:50]
    posts += [replace(post, id=f"{post.id}-repost") for post in posts[:5]]  # the same elements, encoded once
    collator = detector.collator(with_targets=True)
    cache = cached_embeddings(detector.model, collator, posts, tmp_path / "cache", batch_size=7)
    indices = [3, 0, 41, 17, 52]
    live = collator([posts[i] for i in indices])
    cached = CachedCollator(cache, posts, detector.tasks)(indices)
    assert cached.ids == live.ids
    assert torch.equal(cached.targets["harmful"], live.targets["harmful"])
    with torch.no_grad():
        live_elements, cached_elements = detector.model.encode(live), detector.model.encode(cached)
    for kind in detector.model.kinds:
        assert torch.equal(live_elements[kind][1], cached_elements[kind][1]), kind
        assert torch.allclose(live_elements[kind][0], cached_elements[kind][0], atol=1e-5), kind


def test_resume_continues_from_the_last_checkpoint(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1, patience=10)
    train(recipe)
    last = tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt"
    first = torch.load(last, weights_only=True)
    first_record = json.loads((tmp_path / "run" / RECORD).read_text(encoding="utf-8"))
    recipe["train"]["max_epochs"] = 2
    train(recipe, resume=True)
    second = torch.load(last, weights_only=True)
    assert first["epoch"] == 0 and second["epoch"] == 1
    assert second["global_step"] == 2 * first["global_step"]
    assert sorted(p.name for p in (tmp_path / "run" / "logs").iterdir()) == ["version_0", "version_1"]
    # the training time counts the fit before the interruption too
    record = json.loads((tmp_path / "run" / RECORD).read_text(encoding="utf-8"))
    assert first_record["resumed_from"] is None and first_record["fit_seconds_before_resume"] == 0
    assert record["resumed_from"] == str(last)
    assert 0 < record["fit_seconds_before_resume"] < first_record["train_seconds"]
    assert record["train_seconds"] > record["fit_seconds_before_resume"]
    recipe["train"]["max_epochs"] = 1  # below the two epochs the checkpoint trained
    with pytest.raises(
        ValueError, match=r"last.ckpt has trained 2 epochs, more than train.max_epochs 1; set train.max_epochs to 2"
    ):
        train(recipe, resume=True)
    assert torch.load(last, weights_only=True)["global_step"] == second["global_step"]


def test_the_last_checkpoint_holds_the_last_epoch_when_an_earlier_one_was_best(demo_data, tmp_path: Path) -> None:
    # at a learning rate far too high, the model falls to nearly one score for every post after the first epoch or
    # the second (AUROC near 0.5, where an earlier epoch ranks better), so an earlier one stays the best; its
    # validation loss, near the constant score's, can end a hair below the first epoch's. Which of the first two is
    # best varies with what the process ran before (run alone here, the second), not with what is tested here
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=3, patience=10, lr=0.5, monitor="val/harmful/auroc")
    result = train(recipe)
    assert Path(result.best_checkpoint).name.startswith(("epoch=0-", "epoch=1-"))
    last = torch.load(tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt", weights_only=True)
    assert last["epoch"] == 2


@pytest.mark.parametrize(("monitor", "mode"), [("val/loss", "max"), ("val/harmful/auroc", "min")])
def test_a_mode_keeping_the_worst_epoch_of_the_monitored_figure_is_refused_before_training(
    demo_data, tmp_path: Path, monitor: str, mode: str
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", monitor=monitor, mode=mode)
    with pytest.raises(RecipeError, match=rf"train.mode: '{mode}' keeps the epoch of the \w+ {monitor} .*the worst"):
        train(recipe)
    assert not (tmp_path / "run").exists()


def test_a_monitored_auroc_the_validation_split_leaves_undefined_is_refused_before_training(
    demo_data, tmp_path: Path
) -> None:
    """No validation post is of the third class, so the AUROC is NaN at every epoch: early stopping would end the run
    after its first."""
    recipe = tiny_recipe(demo_data, tmp_path / "run", monitor="val/topic/auroc", mode="max")
    recipe["data"]["columns"]["labels"]["topic"] = "topic"
    recipe["model"]["heads"]["topic"] = {"type": "multiclass", "labels": ["weather", "group", "other"]}
    with pytest.raises(
        RecipeError,
        match=r"train.monitor: val/topic/auroc is undefined on .*validation.jsonl: no "
        r"labelled post is of class 'other', so training would stop after its first epoch",
    ):
        train(recipe)
    assert not (tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt").exists()


@pytest.mark.parametrize(
    ("task", "labels", "why"),
    [
        (TaskSpec("t", "binary", ("no", "yes")), ["no", "no", None], "no labelled post is of class 'yes'"),
        (TaskSpec("t", "binary", ("no", "yes")), ["no", "yes"], None),
        (TaskSpec("t", "multiclass", ("a", "b", "c")), ["a", "b", "b"], "no labelled post is of class 'c'"),
        (TaskSpec("t", "multilabel", ("a", "b")), [["a"], ["a", "b"]], "every labelled post carries label 'a'"),
        (TaskSpec("t", "multilabel", ("a", "b")), [["a"], []], "no labelled post carries label 'b'"),
        (TaskSpec("t", "multilabel", ("a", "b")), [["a"], ["b"]], None),
    ],
)  # fmt: skip
def test_an_auroc_is_undefined_where_a_class_or_label_never_or_always_holds(
    task: TaskSpec, labels: list, why: str | None
) -> None:
    posts = [Post(id=str(i), text="x", labels={"t": label}) for i, label in enumerate(labels)]
    assert undefined_auroc(task, posts) == why


def test_a_label_the_task_does_not_know_is_named_with_its_post_as_loading_names_it() -> None:
    post = Post(id="p7", text="x", labels={"t": "maybe"}, origin="val.jsonl:8")
    with pytest.raises(PostError, match=r"^val\.jsonl:8 \(post id='p7'\) field 'labels\.t': label 'maybe'"):
        undefined_auroc(TaskSpec("t", "binary", ("no", "yes")), [post])


def model_weights(result) -> dict[str, torch.Tensor]:
    return {name: tensor.clone() for name, tensor in result.detector.model.state_dict().items()}


def test_resume_continues_the_latest_run_in_the_output_dir(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1, patience=10)
    earlier = model_weights(train(recipe | {"train": recipe["train"] | {"seed": 0}}))
    latest_recipe = recipe | {"train": recipe["train"] | {"seed": 1}}
    latest = model_weights(train(latest_recipe))
    resumed = model_weights(train(latest_recipe, resume=True))  # max_epochs reached: nothing left to train
    train(latest_recipe, resume=True)
    assert all(torch.equal(resumed[name], latest[name]) for name in latest)
    assert not all(torch.equal(resumed[name], earlier[name]) for name in earlier)
    for logged in ("checkpoints", "logs", "tensorboard"):  # a resumed run that trained nothing logged nothing
        assert sorted(p.name for p in (tmp_path / "run" / logged).iterdir()) == ["version_0", "version_1"], logged


def test_resuming_a_run_early_stopping_ended_trains_no_more(demo_data, tmp_path: Path) -> None:
    # at a learning rate too low to change a weight, validation loss never improves: with no patience, the second
    # epoch ends the run, however its posts were drawn
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=4, patience=0, lr=1e-12)
    stopped = model_weights(train(recipe))
    last = tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt"
    before = torch.load(last, weights_only=True)
    assert before["epoch"] == 1
    resumed = model_weights(train(recipe, resume=True))
    assert torch.load(last, weights_only=True)["global_step"] == before["global_step"]
    assert all(torch.equal(resumed[name], stopped[name]) for name in stopped)
    assert [p.name for p in (tmp_path / "run" / "logs").iterdir()] == ["version_0"]  # no empty one of the resumed run


def test_resume_with_another_model_fails_before_training(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1)
    train(recipe)
    assert (tmp_path / "run" / "checkpoints" / "version_0" / "recipe.yaml").is_file()
    recipe["model"]["heads"]["harmful"]["hidden_dim"] = 64
    with pytest.raises(ValueError, match="^resume=True: .*hidden_dim: 32 -> 64.*; train without resume=True to start"):
        train(recipe, resume=True)
    assert sorted(p.name for p in (tmp_path / "run" / "logs").iterdir()) == ["version_0"]


def test_resume_without_a_checkpoint_fails_clearly_naming_what_asked_to_resume(
    demo_data, tmp_path: Path, write_recipe, capsys
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    with pytest.raises(FileNotFoundError, match="^resume=True: no checkpoint to resume from"):
        train(recipe, resume=True)  # faim.train's resume=True, not a command-line option
    assert main(["train", str(write_recipe(recipe)), "--resume"]) == 2
    assert "faim train: error: --resume: no checkpoint to resume from" in capsys.readouterr().err


def test_resuming_with_a_mode_keeping_the_worst_epoch_says_to_train_anew(
    demo_data, tmp_path: Path, write_recipe, capsys
) -> None:
    # the mode is refused as the recipe is read, before the run to resume is looked for
    anew = "set train.mode to min and train anew: a run begun with it cannot be resumed"
    arguments = ["hate_text_frozen", "--set", "train.monitor=val/loss", "--output-dir", str(tmp_path / "run")]
    assert main(["train", *arguments, "--resume"]) == 2
    said = capsys.readouterr().err.rstrip()
    assert said.endswith(
        f"train.mode: 'max' keeps the epoch of the highest val/loss (train.monitor), the worst; {anew}"
    )
    recipe = tiny_recipe(demo_data, tmp_path / "run", monitor="val/loss", mode="max")
    with pytest.raises(RecipeError, match=f"{anew}$"):
        train(recipe, resume=True)
    with pytest.raises(RecipeError, match="set train.mode to min$"):
        train(str(write_recipe(recipe)))


@pytest.mark.parametrize(
    ("split", "change", "message"),
    [
        ("train", lambda rows: [], r"train.jsonl: holds no post"),
        ("train", lambda rows: [row | {"label": None} for row in rows], r"no post carries a label for task 'harmful'"),
        ("validation", lambda rows: [], r"validation.jsonl: holds no post"),
        (
            "train",
            lambda rows: [*rows[:-1], rows[-1] | {"text": "half a pair \ud83d here"}],
            r"train.jsonl:400 \(post id=.*\) field 'text': holds half of a UTF-16 surrogate pair \(\\ud83d",
        ),
        (  # read before the languages of the validation posts are told (eval.languages)
            "validation",
            lambda rows: [*rows[:-1], rows[-1] | {"text": "half a pair \udc00 here"}],
            r"validation.jsonl:160 \(post id=.*\) field 'text': holds half of a UTF-16 surrogate pair \(\\udc00",
        ),
    ],
)
def test_a_split_that_cannot_be_learned_or_calibrated_from_is_refused_before_training(
    split: str, change, message: str, demo_data, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data[split].read_text().splitlines()]
    changed = tmp_path / f"{split}.jsonl"
    changed.write_text("".join(json.dumps(row) + "\n" for row in change(rows)), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {split: changed}, tmp_path / "run")
    recipe["data"]["image_root"] = str(demo_data[split].parent)
    with pytest.raises(ValueError, match=message):
        train(recipe)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda rows: [*rows[:-1], rows[-1] | {"image": "images/nowhere.jpg"}],
            r"test.jsonl \(eval.split 'test'\): 1 of 160 posts names a picture that is not there "
            r".*test.jsonl:160 \(post id=",
        ),
        (
            lambda rows: [*rows[:-1], rows[-1] | {"text": "half a pair \ud83d here"}],
            r"test.jsonl:160 \(post id=.*\) field 'text': holds half of a UTF-16 surrogate pair \(\\ud83d",
        ),
        (  # found after training, calibrating and saving, where evaluation read it
            lambda rows: [row | {"label": None} for row in rows],
            r"test.jsonl \(eval.split 'test'\): no post carries a label for any task \(harmful\); label its posts "
            r".*, or set eval.split to a split whose posts are labelled$",
        ),
    ],
)
def test_an_eval_split_the_model_would_stop_at_is_refused_before_training(
    change, message: str, demo_data, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    test = tmp_path / "test.jsonl"
    test.write_text("".join(json.dumps(row) + "\n" for row in change(rows)), encoding="utf-8")
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1)
    recipe["data"] |= {"test": str(test), "image_root": str(demo_data["validation"].parent)}
    recipe["eval"]["split"] = "test"
    with pytest.raises(ValueError, match=message):
        train(recipe)
    assert not (tmp_path / "run").exists()


def test_the_training_split_is_checked_before_the_split_eval_split_names(demo_data, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in demo_data["train"].read_text().splitlines()]
    unlabelled = tmp_path / "train.jsonl"
    unlabelled.write_text("".join(json.dumps(row | {"label": None}) + "\n" for row in rows), encoding="utf-8")
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    test = tmp_path / "test.jsonl"
    test.write_text("".join(json.dumps(row | {"image": "images/nowhere.jpg"}) + "\n" for row in rows), "utf-8")
    recipe = tiny_recipe(demo_data | {"train": unlabelled}, tmp_path / "run", max_epochs=1)
    recipe["data"] |= {"test": str(test), "image_root": str(demo_data["validation"].parent)}
    recipe["eval"]["split"] = "test"
    with pytest.raises(ValueError, match=r"train.jsonl: no post carries a label for task 'harmful'"):
        train(recipe)


@pytest.mark.parametrize(
    ("labels", "values", "said"),
    [([0, 1], [1, "1", True, 1.0], "1"), (["no", "yes"], ["yes", 1, "true"], "yes"), ([0, 1], [0, "no"], "0")],
)
def test_labels_of_one_class_written_in_several_forms_are_warned_of_as_one_class(
    labels: list, values: list, said: str
) -> None:
    (task,) = task_specs({"heads": {"harmful": {"type": "binary", "labels": labels}}})  # as a recipe's YAML gives them
    posts = [Post(str(i), "text", labels={"harmful": value}) for i, value in enumerate(values)]
    with pytest.warns(
        FaimWarning, match=rf"train.jsonl: every labelled post of task 'harmful' is of one class \({said}\)"
    ):
        check_learnable([task], posts, "train.jsonl", ["text"], 8)
    with pytest.warns(
        FaimWarning, match=rf"the labelled posts of task 'harmful' are of one class \({said}\); it keeps"
    ):
        warn_uncalibrated([task], posts, "validation.jsonl")


def test_labels_of_a_multiclass_or_multilabel_task_no_training_post_holds_are_warned_of_once_a_task() -> None:
    topic = TaskSpec("topic", "multiclass", ("sport", "politcs", "politics", "art"))
    tags = TaskSpec("tags", "multilabel", ("a", "b", "c"))
    posts = [
        Post("1", "x", labels={"topic": "sport", "tags": ["a"]}),
        Post("2", "y", labels={"topic": 2, "tags": ["a", "b"]}),
        Post("3", "z", labels={"topic": None, "tags": None}),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_learnable([topic, tags], posts, "train.jsonl", ["text"], 8)
    assert [str(warning.message) for warning in caught] == [
        "train.jsonl: no labelled post of task 'topic' holds 2 labels of its 4 ('politcs', 'art'); its head can never"
        " learn them (misspelt in model.heads.topic.labels?)",
        "train.jsonl: no labelled post of task 'tags' holds 1 label of its 3 ('c'); its head can never learn it"
        " (misspelt in model.heads.tags.labels?)",
    ]
    held = [Post("4", "w", labels={"topic": "politcs", "tags": "c"}), Post("5", "v", labels={"topic": 3, "tags": []})]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_learnable([topic, tags], posts + held, "train.jsonl", ["text"], 8)


def test_training_posts_labelled_under_a_name_that_is_no_task_are_warned_of() -> None:
    posts = [Post("a", "text", labels={"harmful": 1}), Post("b", "more", labels={"harmfull": 0, "harmful": 0})]
    (task,) = task_specs({"heads": {"harmful": {"type": "binary", "labels": ["no", "yes"]}}})
    with pytest.warns(FaimWarning) as caught:
        check_learnable([task], posts, "train.jsonl", ["text"], 8)
    assert [str(warning.message) for warning in caught] == [
        "train.jsonl: labels under a name that is no task of the model (its tasks: harmful) are not read: 'harmfull' "
        "of 1 post (did you mean 'harmful'?)"
    ]


def test_a_task_no_training_post_is_labelled_for_says_how_to_drop_its_head_where_the_model_has_others() -> None:
    posts = [Post("a", "text", labels={"harmful": 1}), Post("b", "more text", labels={"harmful": 0})]
    harmful, other = TaskSpec("harmful", "binary", ("no", "yes")), TaskSpec("other", "binary", ("no", "yes"))
    with pytest.raises(
        ValueError,
        match=r"^train.jsonl: no post carries a label for task 'other'; to train the other heads alone, drop it: "
        r"model.heads.other: null in a recipe with a base:, or --set model.heads.other=null$",
    ):
        check_learnable([harmful, other], posts, "train.jsonl", ["text"], 8)
    with pytest.raises(ValueError, match=r"^train.jsonl: no post carries a label for task 'other'$"):
        check_learnable([other], posts, "train.jsonl", ["text"], 8)
    unlabelled = [Post("a", "text", labels={}), Post("b", "more text", labels={})]
    with pytest.raises(
        ValueError,  # said to drop the head 'harmful' to train the other heads, which had no label either
        match=r"^train.jsonl: no post carries a label for any task \(harmful, other\); map the columns that hold "
        r"them \(data.columns.labels in the recipe: \{TASK: COLUMN\}\), or point data.train at labelled posts$",
    ):
        check_learnable([harmful, other], unlabelled, "train.jsonl", ["text"], 8)


def test_a_training_split_of_one_class_is_warned_of(demo_data, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in demo_data["train"].read_text().splitlines()]
    changed = tmp_path / "train.jsonl"
    changed.write_text("".join(json.dumps(row | {"label": 0}) + "\n" for row in rows), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"train": changed}, tmp_path / "run", max_epochs=1)
    recipe["data"]["image_root"] = str(demo_data["train"].parent)
    with pytest.warns(
        FaimWarning, match="train.jsonl: every labelled post of task 'harmful' is of one class \\(benign\\)"
    ):
        train(recipe)


@pytest.mark.parametrize("stopped_by", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_training_stopped_by_a_signal_ends_with_its_status_and_names_the_command_that_resumes_it(
    stopped_by: signal.Signals, demo_data, tmp_path: Path
) -> None:
    recipe_file = tmp_path / "recipe.yaml"
    recipe_file.write_text(yaml.safe_dump(tiny_recipe(demo_data, tmp_path / "elsewhere", max_epochs=500)))
    run_dir = tmp_path / "my run"  # an output directory a shell must be given quoted
    command = ["faim", "train", str(recipe_file), "--set", "train.seed=3", "--output-dir", str(run_dir)]
    training = subprocess.Popen(
        [sys.executable, "-m", *command],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's, if this run ignores it
    )
    checkpoint = run_dir / "checkpoints" / "version_0" / "last.ckpt"
    deadline = time.monotonic() + 120
    while not checkpoint.is_file() and training.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    training.send_signal(stopped_by)
    _, stderr = training.communicate(timeout=120)
    assert training.returncode == 128 + stopped_by, stderr
    assert f"stopped by {stopped_by.name} before it saved a model; `" in stderr
    hint = stderr.split("before it saved a model; `")[1].split("`")[0]
    assert shlex.split(hint) == [*command, "--resume"]
    assert stderr.split(f"`{hint}`")[1].startswith(f" continues from {checkpoint}")
    assert not run_dir.joinpath("model").exists()
    # the hinted command resumes that run (max_epochs may change: here to the epochs done, so nothing is left to fit)
    epochs_done = torch.load(checkpoint, weights_only=True)["epoch"] + 1
    assert main([*shlex.split(hint)[1:], "--set", f"train.max_epochs={epochs_done}"]) == 0
    assert json.loads((run_dir / RECORD).read_text(encoding="utf-8"))["resumed_from"] == str(checkpoint)


API_INTERRUPTED = """
import signal, sys
import faim
try:
    faim.train(sys.argv[1])
except KeyboardInterrupt:
    restored = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    sys.exit(7 if restored else 8)
"""


def test_ctrl_c_in_a_python_api_training_raises_keyboard_interrupt_and_leaves_ctrl_c_working(
    demo_data, tmp_path: Path
) -> None:
    recipe_file = tmp_path / "recipe.yaml"
    recipe_file.write_text(yaml.safe_dump(tiny_recipe(demo_data, tmp_path / "run", max_epochs=500)))
    training = subprocess.Popen(
        [sys.executable, "-c", API_INTERRUPTED, str(recipe_file)],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.default_int_handler),  # Python's own, as in a shell
    )
    checkpoint = tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt"
    deadline = time.monotonic() + 120
    while not checkpoint.is_file() and training.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    training.send_signal(signal.SIGINT)
    _, stderr = training.communicate(timeout=120)
    assert training.returncode == 7, stderr  # 8: SIGINT left ignored; 1: the SystemExit Lightning raises
    assert "faim.train: stopped by SIGINT before it saved a model; the same call with resume=True continues from" in (
        stderr
    )


def test_training_evaluation_its_rerun_and_faim_eval_name_the_same_opposite_words(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1)
    result = train(recipe)
    posts = build_source(as_recipe(recipe).data_section).posts("validation")
    trained = result.report["tasks"]["harmful"]["terms"]
    labelled_harmful = np.mean([post.labels["harmful"] for post in posts])
    assert trained["positive"] == "harmful" and trained["overall"][1] == pytest.approx(labelled_harmful)
    again = evaluate_run(recipe, result.model_dir)["tasks"]["harmful"]["terms"]
    evaluated = evaluate(result.detector, posts, tmp_path / "eval", "validation")["tasks"]["harmful"]["terms"]
    assert again == trained == evaluated


def test_bf16_autocast_trains(demo_data, tmp_path: Path) -> None:
    result = train(tiny_recipe(demo_data, tmp_path / "run", max_epochs=1, precision="bf16-mixed"))
    assert result.report["tasks"]["harmful"]["metrics"]["n"] == 160


@pytest.mark.slow
def test_ddp_on_two_cpu_processes(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1, strategy="ddp", devices=2)
    path = tmp_path / "ddp.yaml"
    path.write_text(yaml.safe_dump(recipe))
    env = os.environ | {"PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, "-m", "faim", "train", str(path)], capture_output=True, text=True, timeout=600, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "world_size=2" in result.stderr or "distributed_backend=gloo" in result.stderr
    checkpoint = torch.load(tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt", weights_only=True)
    assert checkpoint["global_step"] == 7  # 400 posts / (2 processes x 32) per epoch, rounded up
    for folder in ("checkpoints", "logs", "tensorboard"):  # one run, one number: the second process takes none
        assert [path.name for path in (tmp_path / "run" / folder).iterdir()] == ["version_0"]
    assert (tmp_path / "run" / "model" / "faim.json").is_file()
    # the AUROC early stopping monitors is the one of every validation post (80 a process), not a mean of the
    # processes' own: the saved model holds that epoch's weights, and evaluating it reads all 160 (temperature
    # scaling keeps their order)
    with (tmp_path / "run" / "logs" / "version_0" / "metrics.csv").open(encoding="utf-8") as file:
        logged = [float(row["val/harmful/auroc"]) for row in csv.DictReader(file) if row.get("val/harmful/auroc")]
    metrics = json.loads((tmp_path / "run" / "eval" / "metrics.json").read_text(encoding="utf-8"))
    assert logged == [pytest.approx(metrics["tasks"]["harmful"]["metrics"]["auroc"], abs=1e-6)]


@pytest.mark.parametrize(("written", "trained"), [("64", "64-true"), ("32", "32-true"), ("bf16", "bf16-mixed")])
def test_a_precision_is_taken_as_lightning_takes_it_written_as_yaml_reads_it(
    demo_data, tmp_path: Path, written: str, trained: str
) -> None:
    """``precision: 64`` is a number in YAML, as Lightning's ``precision=64`` is."""
    recipe = as_recipe(tiny_recipe(demo_data, tmp_path / "run", precision=yaml.safe_load(written)))
    trainer, _, _ = make_trainer(recipe, tmp_path / "run", 0, tmp_path / "run" / "checkpoints" / "version_0")
    assert trainer.precision == trained


@pytest.mark.parametrize(
    ("strategy", "devices", "looks"),
    [("auto", 2, True), ("ddp", 2, True), ("ddp_spawn", 2, True), ("ddp_find_unused_parameters_false", 2, False)],
)
def test_every_data_parallel_run_looks_for_parameters_a_batch_leaves_unused_unless_told_not_to(
    demo_data, tmp_path: Path, strategy: str, devices: int, looks: bool
) -> None:
    """A batch where no post has a picture leaves the image layers without a gradient, which DDP stops at unless it
    looks for unused parameters: on two devices, the default strategy is data-parallel too."""
    recipe = as_recipe(tiny_recipe(demo_data, tmp_path / "run", strategy=strategy, devices=devices))
    trainer, _, _ = make_trainer(recipe, tmp_path / "run", 0, tmp_path / "run" / "checkpoints" / "version_0")
    assert isinstance(trainer.strategy, DDPStrategy)
    assert trainer.strategy._ddp_kwargs["find_unused_parameters"] is looks


def test_one_device_trains_as_lightning_picks_for_it(demo_data, tmp_path: Path) -> None:
    recipe = as_recipe(tiny_recipe(demo_data, tmp_path / "run"))
    trainer, _, _ = make_trainer(recipe, tmp_path / "run", 0, tmp_path / "run" / "checkpoints" / "version_0")
    assert isinstance(trainer.strategy, SingleDeviceStrategy)


@pytest.mark.parametrize(("accelerator", "devices", "tpus"), [("cpu", 2, False), ("auto", 8, True), ("tpu", 8, True)])
def test_lightning_picks_the_strategy_a_recipe_leaves_auto(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, accelerator: str, devices: int, tpus: bool
) -> None:
    """On TPUs, Lightning's default is its XLA strategy, and it refuses DDP there; elsewhere it is DDP on several
    devices. Lightning is given ``auto`` to pick from (a TPU, which this machine lacks, is stood for)."""
    given: dict[str, object] = {}

    def trainer(**settings: object) -> SimpleNamespace:
        given.update(settings)
        return SimpleNamespace(strategy=SingleDeviceStrategy())

    monkeypatch.setattr(XLAAccelerator, "is_available", staticmethod(lambda: tpus))
    monkeypatch.setattr(pl, "Trainer", trainer)
    recipe = as_recipe(tiny_recipe(demo_data, tmp_path / "run", accelerator=accelerator, devices=devices))
    make_trainer(recipe, tmp_path / "run", 0, tmp_path / "run" / "checkpoints" / "version_0")
    assert given["strategy"] == "auto"


def test_balanced_sources_are_drawn_alike_and_set_the_threshold_of_the_saved_model(demo_data, tmp_path: Path) -> None:
    """Two copies of the demo data as a concat, the second kept to a tenth of its training posts."""
    small = demo_data["train"].with_name("train_first_40.jsonl")  # beside the pictures its rows name
    small.write_text("".join(demo_data["train"].read_text(encoding="utf-8").splitlines(True)[:40]), encoding="utf-8")
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1)
    other = recipe["data"] | {"train": str(small)}
    recipe["data"] = {"type": "concat", "sources": [recipe["data"], other], "evaluate_on": "all"}
    recipe["train"] |= {"balance": "sources"}
    recipe["eval"] = recipe.get("eval", {}) | {"threshold_objective": "macro_f1", "threshold_balance": "sources"}
    result = train(recipe)
    resolved = as_recipe(recipe)

    source = build_source(resolved.data)
    loader = recipe_loader(resolved, result.detector, source.posts("train"), True, "train")
    assert isinstance(loader.sampler.sampler, WeightedRandomSampler)  # each epoch's draws seeded anew
    assert sorted(set(loader.sampler.sampler.weights.tolist())) == pytest.approx([1 / 400, 1 / 40])

    saved = faim.load(result.model_dir)
    validation = recipe_loader(resolved, saved, source.posts("validation"), False, "validation")
    predictions = predict(saved.model, validation)
    (task,) = saved.tasks
    y = predictions.targets[task.name].astype(int)
    prob = saved.calibration.probabilities(task, predictions.logits[task.name])
    sources = [meta["source"] for meta in predictions.meta]
    assert set(sources) == {"0-jsonl", "1-jsonl"}
    expected = choose_threshold(y, prob, "macro_f1", weights=source_class_weights(sources, y))
    assert saved.calibration.thresholds[task.name] == pytest.approx(expected)
    assert expected != pytest.approx(choose_threshold(y, prob, "macro_f1"))


def test_a_model_folder_holding_other_files_is_refused_before_training_and_left_as_it_was(
    demo_data, tmp_path: Path
) -> None:
    mine = tmp_path / "run" / "model"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(FileExistsError, match="is not one faim wrote"):
        train(tiny_recipe(demo_data, tmp_path / "run"))
    assert [path.name for path in (tmp_path / "run").iterdir()] == ["model"]
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep"


def test_a_preprocessor_worker_processes_cannot_be_given_is_refused_leaving_the_output_folder_as_it_was(
    demo_data, tmp_path: Path
) -> None:
    from faim import registry
    from faim.encoders.tiny_text import TinyTextEncoder

    class LocalPreprocessorText(TinyTextEncoder):
        def preprocessor(self):  # a closure, which pickle cannot carry to a worker process
            preprocess = super().preprocessor()
            return lambda texts: preprocess(texts)

    recipe = tiny_recipe(demo_data, tmp_path / "run", num_workers=2, cache_dir=str(tmp_path / "cache"))
    recipe["model"]["encoders"]["text"]["type"] = "test_local_preprocessor"
    (tmp_path / "run").mkdir()
    faim.register_encoder("test_local_preprocessor")(LocalPreprocessorText)
    try:
        with pytest.raises(ValueError, match="cannot be pickled"):
            train(recipe)
    finally:
        registry.ENCODERS.pop("test_local_preprocessor")
    assert list((tmp_path / "run").iterdir()) == []


def crowd_recipe(demo_data, tmp_path: Path, name: str, harmful_asks: float) -> dict:
    """The tiny recipe pooling by picture and weighing the crowd's corrections across three groups of posts
    (``meta.batch``), on the demo posts, of which a share ``harmful_asks`` of the harmful ones (and 2 % of the
    others) ask "is this real?"."""
    rng = np.random.default_rng(0)
    recipe = tiny_recipe(demo_data, tmp_path / name, max_epochs=1)
    for split in ("train", "validation"):
        rows = [json.loads(line) for line in demo_data[split].read_text(encoding="utf-8").splitlines()]
        for index, row in enumerate(rows):
            row["batch"] = f"batch {index % 3}"
            if rng.random() < (harmful_asks if row["label"] == 1 else 0.02):
                row["text"] += " is this real?"
        written = demo_data[split].with_name(f"{split}_{name}.jsonl")  # beside the pictures its rows name
        written.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        recipe["data"][split] = str(written)
    recipe["data"]["columns"]["meta"].append("batch")
    recipe["eval"] |= {"pool_by_image": 1.0, "crowd_corrections": "batch"}
    return recipe


def test_training_weighs_the_crowds_corrections_where_they_tell_the_classes_apart_across_groups(
    demo_data, tmp_path: Path, capsys
) -> None:
    result = train(crowd_recipe(demo_data, tmp_path, "asking", harmful_asks=0.4))
    printed = capsys.readouterr().out
    assert "harmful: the crowd's corrections weigh" in printed and "across 3 groups of meta.batch" in printed
    weight = faim.load(result.model_dir).pooled.correction_weights["harmful"]
    assert weight > 0
    assert "without_crowd_corrections" in result.report["tasks"]["harmful"]["ablations"]
    result = train(crowd_recipe(demo_data, tmp_path, "silent", harmful_asks=0.02))
    assert "the crowd's corrections weigh nothing" in capsys.readouterr().out
    assert faim.load(result.model_dir).pooled.correction_weights == {"harmful": 0.0}


def test_weighing_the_crowds_corrections_names_a_training_post_without_a_group(demo_data, tmp_path: Path) -> None:
    recipe = crowd_recipe(demo_data, tmp_path, "ungrouped", harmful_asks=0.4)
    recipe["eval"]["crowd_corrections"] = "event"
    lacking = r"train_ungrouped.jsonl:1 \(post id='.+'\): eval.crowd_corrections groups .* by meta.event, which this"
    with pytest.raises(ValueError, match=lacking):
        train(recipe)


def test_weighing_the_crowds_corrections_over_one_group_is_refused_before_training(demo_data, tmp_path: Path) -> None:
    weather = demo_data["train"].with_name("train_weather.jsonl")  # beside the pictures its rows name
    rows = [row for row in demo_data["train"].read_text(encoding="utf-8").splitlines() if '"weather"' in row]
    weather.write_text("\n".join(rows) + "\n", encoding="utf-8")
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1)
    recipe["data"]["train"] = str(weather)
    recipe["eval"] |= {"pool_by_image": 1.0, "crowd_corrections": "topic"}
    with pytest.raises(ValueError, match="every training post has meta.topic = 'weather'; the weight is cross-valid"):
        train(recipe)
    assert not list((tmp_path / "run").rglob("*.ckpt"))  # refused before training


def test_a_run_folder_under_the_home_folder_holds_faims_files_and_lightnings_alike(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    recipe = tiny_recipe(demo_data, tmp_path / "unused", max_epochs=1)
    recipe["train"]["output_dir"] = "~/run"
    train(recipe)
    run = tmp_path / "home" / "run"
    assert (run / "model" / "faim.json").is_file() and (run / "train_record.json").is_file()
    assert list((run / "checkpoints").glob("version_0/*.ckpt")) and (run / "logs" / "version_0").is_dir()
    assert not (tmp_path / "~").exists()
    assert train(recipe, resume=True).model_dir == run / "model"


def test_a_training_split_none_of_whose_posts_holds_what_the_model_reads_is_refused(tmp_path: Path) -> None:
    rows = "".join(
        json.dumps({"id": str(n), "tweet": f"post {n}", "label": n % 2, "topic": "a"}) + "\n" for n in range(20)
    )
    data = {split: tmp_path / f"{split}.jsonl" for split in ("train", "validation")}
    for path in data.values():
        path.write_text(rows, encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"train.jsonl.*: no post holds anything the model reads \(comments, image, text"
    ):
        train(tiny_recipe(data, tmp_path / "run"))
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_a_cache_folder_that_is_a_file_or_inside_one_is_refused_before_a_post_is_read_or_embedded(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocking = tmp_path / "cache"
    blocking.write_text("", encoding="utf-8")
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run"))
    monkeypatch.setattr(JsonlSource, "rows", lambda self, path: pytest.fail(f"{path} was read"))
    for cache in (blocking, blocking / "embeddings"):
        recipe["train"]["cache_dir"] = str(cache)
        with pytest.raises(RecipeError, match=rf"^<dict>: train.cache_dir: {re.escape(str(blocking))}: is a file, not"):
            train(recipe)
    assert not (tmp_path / "run").exists()
    recipe["train"]["cache_embeddings"] = False  # nothing is cached, so the folder is never written
    with pytest.raises(pytest.fail.Exception, match="was read"):
        train(recipe)


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ({"data": {"train": None}}, "data: the data has no split 'train'; its splits: validation"),
        ({"data": {"validation": None}}, "data: the data has no split 'validation'; its splits: train"),
        ({"eval": {"split": "tset"}}, "eval.split: the data has no split 'tset'; its splits: train, validation"),
    ],
    ids=["train", "validation", "eval.split"],
)
def test_a_split_the_data_lacks_is_refused_naming_the_recipe_before_training(
    demo_data, tmp_path: Path, setting: dict, named: str
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    for section, values in setting.items():
        recipe[section] |= values
    with pytest.raises(RecipeError, match=f"^<dict>: {named}$"):
        train(recipe)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ({"data": {"validation": "valdation.jsonl"}}, "data.validation: .*valdation.jsonl does not exist"),
        ({"data": {"test": "tset.jsonl"}, "eval": {"split": "test"}}, "data.test: .*tset.jsonl does not exist"),
    ],
    ids=["validation", "eval.split"],
)
def test_a_split_file_not_there_is_named_before_any_split_is_read_the_model_built_or_lightning_says_a_word(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: dict, named: str
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    for section, values in setting.items():
        recipe[section] |= {key: str(tmp_path / value) if key != "split" else value for key, value in values.items()}
    monkeypatch.setattr(JsonlSource, "rows", lambda self, path: pytest.fail(f"{path} was read"))
    monkeypatch.setattr("faim.training.run.Detector.from_recipe", lambda recipe: pytest.fail("the model was built"))
    monkeypatch.setattr(pl, "Trainer", lambda **_: pytest.fail("Lightning's Trainer was made, printing its devices"))
    with pytest.raises(FileNotFoundError, match=f"^{named}"):
        train(recipe)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("data", "train_file"),
    [({"type": "tweeteval"}, "train_text.txt"), ({"type": "liar", "labels": "binary"}, "train.tsv")],
    ids=["tweeteval", "liar"],
)
def test_a_dataset_root_not_there_is_named_before_an_eval_split_it_hides_is_refused(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: dict, train_file: str
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["data"] = data | {"root": str(tmp_path / "nowhere"), "task": "harmful"}
    recipe["eval"] = recipe.get("eval", {}) | {"split": "test"}
    monkeypatch.setattr("faim.training.run.Detector.from_recipe", lambda recipe: pytest.fail("the model was built"))
    missing = re.escape(str(tmp_path / "nowhere" / train_file))
    with pytest.raises(
        FileNotFoundError, match=f"^data.root: {missing} does not exist \\(resolved to {missing}\\); root"
    ):
        train(recipe)
    assert not (tmp_path / "run").exists()


def test_evaluating_a_run_again_names_its_eval_split_file_not_there_before_the_model_is_loaded(
    demo_data, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = tiny_recipe(demo_data | {"train": tmp_path / "gone.jsonl"}, tmp_path / "run")
    recipe["data"]["test"], recipe["eval"]["split"] = str(tmp_path / "tset.jsonl"), "test"
    monkeypatch.setattr("faim.api.Detector.load", lambda path: pytest.fail("the model was loaded"))
    with pytest.raises(FileNotFoundError, match=r"^data.test: .*tset.jsonl does not exist"):
        evaluate_run(recipe, tiny_model_dir)


def test_evaluating_a_run_again_names_its_eval_split_holding_no_post_before_the_model_is_loaded(
    demo_data, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "validation.jsonl"
    empty.write_text("", encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"validation": empty}, tmp_path / "run")
    monkeypatch.setattr("faim.api.Detector.load", lambda path: pytest.fail("the model was loaded"))
    with pytest.raises(ValueError, match=r"validation.jsonl \(eval.split 'validation'\): holds no post$"):
        evaluate_run(recipe, tiny_model_dir)


def test_a_validation_split_without_labels_is_refused_before_training_and_one_of_one_class_is_warned_of(
    demo_data, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()]
    images = str(demo_data["validation"].parent)
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text("".join(json.dumps(row | {"label": None}) + "\n" for row in rows))
    recipe = tiny_recipe(demo_data | {"validation": unlabelled}, tmp_path / "run", max_epochs=1)
    recipe["data"]["image_root"] = images
    with pytest.raises(
        ValueError,
        match=r"unlabelled.jsonl: no post carries a label for any task \(harmful\); label the validation posts, or "
        r"point data.validation at labelled ones$",
    ):
        train(recipe)
    assert not (tmp_path / "run" / "checkpoints").exists()
    one_class = tmp_path / "one_class.jsonl"
    one_class.write_text("".join(json.dumps(row | {"label": 0}) + "\n" for row in rows))
    recipe = tiny_recipe(demo_data | {"validation": one_class}, tmp_path / "run", max_epochs=1)
    recipe["data"]["image_root"] = images
    with pytest.warns(
        FaimWarning,
        match=r"the labelled posts of task 'harmful' are of one class \(benign\); it keeps a temperature of 1",
    ):
        train(recipe)


def test_training_checks_once_that_the_validation_posts_carry_a_label(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, label_checks: list[str]
) -> None:
    class Checked(Exception):
        """Raised as the run's recipe is written, once the splits' posts are checked."""

    def written(*args: object) -> None:
        raise Checked

    monkeypatch.setattr("faim.training.run.save_run_recipe", written)
    with pytest.raises(Checked):
        train(tiny_recipe(demo_data, tmp_path / "run", max_epochs=1))
    assert label_checks == [str(demo_data["validation"])]


@pytest.mark.parametrize(
    ("setting", "value", "reason"),
    [
        pytest.param(
            "accelerator",
            "mps",
            "MPSAccelerator` can not run",
            marks=pytest.mark.skipif(torch.backends.mps.is_available(), reason="this machine has MPS"),
        ),
        ("strategy", "fsdp", "requires a GPU accelerator"),  # named by Lightning, not on CPUs
    ],
)
def test_training_settings_lightning_refuses_are_named_once_the_data_is_checked_before_a_post_is_embedded(
    demo_data, tmp_path: Path, setting: str, value: str, reason: str
) -> None:
    recipe = frozen(tiny_recipe(demo_data, tmp_path / "run"))  # embedding would write the cache in the run's folder
    recipe["train"][setting] = value
    with pytest.raises(RecipeError, match=rf"train: this machine cannot train with .*{setting}='{value}'.*{reason}"):
        train(recipe)
    assert not (tmp_path / "run").exists()
    recipe["data"]["train"] = str(tmp_path / "absent.jsonl")  # named first, before Lightning prints its devices
    with pytest.raises(FileNotFoundError, match="absent.jsonl does not exist"):
        train(recipe)


@pytest.mark.parametrize(
    ("section", "key", "value", "refusal"),
    [
        ("model", "heads", {"harmful": {"type": "binary", "labels": ["benign", "harmful"], "hidden_dim": -3}},
         r"model.heads.harmful: need input_dim > 0 and hidden_dim >= 0"),
        ("data", "evaluate_on", "nope", r"data: concat: evaluate_on must be one of"),
    ],
)  # fmt: skip
def test_an_argument_a_constructor_refuses_is_named_with_the_recipe_file(
    demo_data, tmp_path: Path, write_recipe, section: str, key: str, value: object, refusal: str
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["data"] = {"type": "concat", "sources": [recipe["data"], recipe["data"]]}
    recipe[section][key] = value
    path = write_recipe(recipe)
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(path))}: {refusal}"):
        train(path)


def test_an_argument_a_model_component_refuses_is_named_before_the_data_is_read(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["heads"]["harmful"]["hidden_dim"] = -3
    monkeypatch.setattr(JsonlSource, "posts", lambda self, split: pytest.fail(f"the {split} split was read"))
    with pytest.raises(RecipeError, match=r"^<dict>: model.heads.harmful: need input_dim > 0 and hidden_dim >= 0"):
        train(recipe)
    assert not (tmp_path / "run").exists()


def test_pictures_not_there_are_refused_naming_the_posts_before_training(demo_data, tmp_path: Path) -> None:
    moved = tmp_path / "validation.jsonl"  # the pictures left beside the demo's file
    moved.write_text(demo_data["validation"].read_text(encoding="utf-8"), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"validation": moved}, tmp_path / "run", max_epochs=1)
    with pytest.raises(ValueError, match=r"validation.jsonl.*: 160 of 160 posts name a picture that is not there"):
        train(recipe)
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_evaluating_a_run_again_names_the_recipes_file_for_an_argument_its_source_refuses(
    demo_data, tiny_model_dir: Path, tmp_path: Path, write_recipe
) -> None:
    path = write_recipe(refused_source_recipe(demo_data, tmp_path / "run"))
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(path))}: data: concat: evaluate_on must be one of"):
        evaluate_run(path, tiny_model_dir)
    assert not (tmp_path / "run").exists()


def test_evaluating_a_run_again_refuses_pictures_not_there_before_the_model_reads_a_post(
    demo_data, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "validation.jsonl"  # the pictures left beside the demo's file
    moved.write_text(demo_data["validation"].read_text(encoding="utf-8"), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"validation": moved}, tmp_path / "run")
    monkeypatch.setattr("faim.eval.evaluate.predict", lambda *args, **kwargs: pytest.fail("the model read posts"))
    with pytest.raises(ValueError, match=r"validation.jsonl.*: 160 of 160 posts name a picture that is not there"):
        evaluate_run(recipe, tiny_model_dir)
    assert not (tmp_path / "run").exists()


def test_evaluating_a_run_again_refuses_an_eval_split_without_labels_before_the_model_reads_a_post(
    demo_data, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [json.loads(line) | {"label": None} for line in demo_data["validation"].read_text().splitlines()]
    unlabelled = tmp_path / "validation.jsonl"
    unlabelled.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"validation": unlabelled}, tmp_path / "run")
    recipe["data"]["image_root"] = str(demo_data["validation"].parent)
    monkeypatch.setattr("faim.eval.evaluate.predict", lambda *args, **kwargs: pytest.fail("the model read posts"))
    with pytest.raises(
        ValueError,
        match=r"validation.jsonl \(eval.split 'validation'\): no post carries a label for any task \(harmful\); "
        r"label its posts \(.*\), or set eval.split to a split whose posts are labelled$",
    ):
        evaluate_run(recipe, tiny_model_dir)
    assert not (tmp_path / "run").exists()


def test_evaluating_a_run_again_checks_the_labels_of_the_saved_models_tasks_before_the_model_reads_a_post(
    demo_data, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    spam_only = tmp_path / "validation.jsonl"  # labelled for a task the saved model lacks alone
    spam_only.write_text("".join(json.dumps(row | {"spam": row["label"], "label": None}) + "\n" for row in rows))
    recipe = tiny_recipe(demo_data | {"validation": spam_only}, tmp_path / "run")
    recipe["data"]["image_root"] = str(demo_data["validation"].parent)
    recipe["data"]["columns"]["labels"]["spam"] = "spam"  # the recipe given a head since the model was saved
    recipe["model"]["heads"]["spam"] = {"type": "binary", "labels": ["no", "yes"], "hidden_dim": 32}
    monkeypatch.setattr("faim.eval.evaluate.predict", lambda *args, **kwargs: pytest.fail("the model read posts"))
    with pytest.raises(
        ValueError,
        match=r"validation.jsonl \(eval.split 'validation'\): no post carries a label for any task \(harmful\); "
        r"label its posts",
    ):
        evaluate_run(recipe, tiny_model_dir)
    assert not (tmp_path / "run").exists()


def test_evaluating_a_run_again_looks_up_the_pictures_the_saved_model_reads_before_it_reads_a_post(
    demo_data, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "validation.jsonl"  # the pictures left beside the demo's file
    moved.write_text(demo_data["validation"].read_text(encoding="utf-8"), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"validation": moved}, tmp_path / "run")
    del recipe["model"]["encoders"]["image"]  # the recipe no longer reads pictures; the saved model does
    monkeypatch.setattr("faim.eval.evaluate.predict", lambda *args, **kwargs: pytest.fail("the model read posts"))
    with pytest.raises(ValueError, match=r"validation.jsonl.*: 160 of 160 posts name a picture that is not there"):
        evaluate_run(recipe, tiny_model_dir)


def test_a_kind_no_training_post_holds_is_warned_of_naming_the_column_to_map(demo_data, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in demo_data["train"].read_text(encoding="utf-8").splitlines()]
    unmapped = tmp_path / "train.jsonl"  # the pictures under a column the recipe does not map
    unmapped.write_text("".join(json.dumps({"img": row.pop("image"), **row}) + "\n" for row in rows))
    moved = tmp_path / "validation.jsonl"  # stops the run before training, once the splits are checked
    moved.write_text(demo_data["validation"].read_text(encoding="utf-8"), encoding="utf-8")
    recipe = tiny_recipe({"train": unmapped, "validation": moved}, tmp_path / "run", max_epochs=1)
    with (
        pytest.warns(FaimWarning, match=r"train.jsonl.*: no post holds any image, which the model reads.*"
                     r"data.columns: \{image: COLUMN\}\) \(columns of the data no mapping reads: img\)"),
        pytest.raises(ValueError, match=r"validation.jsonl.*: 160 of 160 posts name a picture that is not there"),
    ):  # fmt: skip
        train(recipe)


@pytest.mark.parametrize("stopped_at", ["evaluating", "reading the test split"])
def test_ctrl_c_while_a_rerun_evaluates_says_the_model_is_saved_and_leaves_no_record_of_the_one_it_replaced(
    demo_data, tmp_path: Path, monkeypatch, capsys, stopped_at: str
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1)
    recipe["data"]["test"] = str(demo_data["validation"])
    recipe["eval"] = recipe.get("eval", {}) | {"split": "test"}
    train(recipe)
    record = tmp_path / "run" / RECORD
    assert record.is_file()

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    if stopped_at == "evaluating":
        monkeypatch.setattr(faim.api, "evaluate_loader", stopped)
    else:  # as the saved model embeds the test split's posts, before evaluating them
        loader = faim.training.run.recipe_loader
        monkeypatch.setattr(
            faim.training.run,
            "recipe_loader",
            lambda *args, **kwargs: stopped() if args[4] == "test" else loader(*args, **kwargs),
        )
    capsys.readouterr()
    with pytest.raises(KeyboardInterrupt):
        train(recipe | {"train": recipe["train"] | {"lr": 0.01}})  # a rerun into the same folder, stopped evaluating
    said = capsys.readouterr().err
    model, report = tmp_path / "run" / "model", tmp_path / "run" / "eval"
    assert (
        f"faim.train: stopped by SIGINT while evaluating the model it saved, {model}; its report, {report} (what it "
        f"holds is not this model's), and {RECORD} are not written; the same call with resume=True writes them"
    ) in said
    assert not record.exists()  # the record of the model the rerun replaced


def test_ctrl_c_while_the_trained_model_is_calibrated_names_the_checkpoint_and_the_call_that_resumes_it(
    demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(faim.detector.Detector, "calibrate", stopped)
    with pytest.raises(KeyboardInterrupt):
        train(tiny_recipe(demo_data, tmp_path / "run", max_epochs=1))
    last = tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt"
    assert (
        f"faim.train: stopped by SIGINT before it saved a model; the same call with resume=True continues from {last}"
    ) in capsys.readouterr().err
    assert last.is_file() and not (tmp_path / "run" / "model").exists()


def test_a_multiclass_or_multilabel_task_no_validation_post_labels_is_warned_of() -> None:
    topic = TaskSpec("topic", "multiclass", ("sport", "food"))
    tags = TaskSpec("tags", "multilabel", ("a", "b"))
    posts = [Post("1", "x", labels={"topic": None}), Post("2", "y", labels={"tags": None})]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_uncalibrated([topic, tags], posts, "validation.csv")
    assert [str(warning.message) for warning in caught] == [
        "validation.csv: no post carries a label for task 'topic'; it keeps a temperature of 1, and a report of these "
        "posts has no figures for it",
        "validation.csv: no post carries a label for task 'tags'; a report of these posts has no figures for it (a "
        "multilabel task is calibrated on no labels: its probabilities are its head's sigmoid, each label decided at "
        "0.5)",
    ]


def test_a_multiclass_or_multilabel_task_whose_validation_auroc_is_undefined_is_warned_of() -> None:
    topic = TaskSpec("topic", "multiclass", ("sport", "food", "art"))
    tags = TaskSpec("tags", "multilabel", ("a", "b"))
    harmful = TaskSpec("harmful", "binary", ("no", "yes"))  # warn_uncalibrated says it of a binary task
    labels = [{"topic": "sport", "tags": ["a"], "harmful": 1}, {"topic": "food", "tags": ["a", "b"], "harmful": 1}]
    posts = [Post(str(i), "x", labels=post) for i, post in enumerate(labels)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_undefined_auroc([topic, tags, harmful], posts, "validation.csv")
    assert [str(warning.message) for warning in caught] == [
        "validation.csv: val/topic/auroc is undefined (no labelled post is of class 'art') and logged NaN; "
        "val/topic/macro_f1 is defined",
        "validation.csv: val/tags/auroc is undefined (every labelled post carries label 'a') and logged NaN; "
        "val/tags/macro_f1 is defined",
    ]


def test_a_temperature_fitted_at_an_edge_of_its_range_is_warned_of() -> None:
    # a task of four labelled validation posts was fitted a temperature of 20, its probabilities all near 0.5, by
    # faim train without a word, where faim calibrate says it
    tasks = [TaskSpec(name, "binary", ("no", "yes")) for name in ("few", "apart", "fine")]
    calibration = Calibration.identity(tasks)
    calibration.temperatures.update({"few": 19.99998, "apart": 0.05, "fine": 1.3})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_temperature_edges(calibration, "validation.jsonl")
    assert [str(warning.message) for warning in caught] == [
        "validation.jsonl: task 'few': temperature 20.000, at the upper edge of the range 0.05–20 the fit searches: "
        "the model's scores barely tell these labels apart, or read them backwards",
        "validation.jsonl: task 'apart': temperature 0.050, at the lower edge of the range 0.05–20 the fit searches: "
        "the model's scores separate these labels perfectly (too few to fit on), or lie so close together that this "
        "temperature spreads them too little (a head that learnt little)",
    ]


def test_training_warns_of_validation_posts_sharing_ids_with_the_training_posts_before_it_trains(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Checked(Exception):
        """Raised as the run's recipe is written, once the splits' posts are checked."""

    def written(*args: object) -> None:
        raise Checked

    training = [json.loads(line) for line in demo_data["train"].read_text(encoding="utf-8").splitlines()]
    validation = tmp_path / "validation.jsonl"
    validation.write_text("".join(json.dumps(post) + "\n" for post in training[:40]), encoding="utf-8")
    monkeypatch.setattr("faim.training.run.save_run_recipe", written)
    shared = rf"{re.escape(str(validation))}: 40 ids its posts share with the training posts of "
    recipe = tiny_recipe(demo_data | {"validation": validation}, tmp_path / "run", max_epochs=1)
    recipe["data"]["image_root"] = str(demo_data["train"].parent)
    with pytest.warns(FaimWarning, match=shared), pytest.raises(Checked):
        train(recipe)


def test_posts_holding_more_than_the_model_reads_are_warned_of_once_a_run_naming_each_split_holding_any(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Checked(Exception):
        """Raised as the Trainer is made, once every split's posts are checked."""

    def made(*args: object) -> None:
        raise Checked

    monkeypatch.setattr("faim.training.run.make_trainer", made)
    test = tmp_path / "test.jsonl"  # the validation posts, read again as eval.split's
    test.write_text(demo_data["validation"].read_text(encoding="utf-8"), encoding="utf-8")
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_elements=1)  # the demo's posts hold up to 2 comments
    recipe["data"] |= {"test": str(test), "image_root": str(demo_data["validation"].parent)}
    recipe["eval"]["split"] = "test"
    with pytest.warns(FaimWarning) as said, pytest.raises(Checked):
        train(recipe)
    overfull = [str(warning.message) for warning in said if "than the model reads" in str(warning.message)]
    held = {
        path: sum(len(json.loads(line)["comments"]) > 1 for line in path.read_text(encoding="utf-8").splitlines())
        for path in (demo_data["train"], demo_data["validation"], test)
    }
    named = ", ".join(f"{path} ({count} posts)" for path, count in held.items())
    assert overfull == [
        f"{named}: {sum(held.values())} posts hold more pictures or comments than the model reads of a post (up to 2): "
        "it reads the first 1 of each alone (the recipe's train.max_elements: 1), the rest unread; a model trained "
        "with a larger train.max_elements reads more"
    ]


def test_pictures_a_model_embeds_but_does_not_fuse_are_not_warned_of_as_more_than_it_reads(
    demo_data: dict[str, Path], tmp_path: Path
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["fusion"] = {"type": "concat", "kinds": ["comments", "text"]}
    picture = tmp_path / "p.png"
    picture.write_bytes(b"x")
    posts = [Post(str(i), "text", images=[str(picture)] * 12 * i, labels={"harmful": i % 2}) for i in range(2)]
    kinds = sorted(recipe["model"]["encoders"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", FaimWarning)
        warn_overfull_splits({"train.jsonl": posts}, recipe_fused_kinds(recipe["model"]), 8)
    with pytest.warns(FaimWarning, match=r"^train.jsonl: 1 post holds more pictures or comments than the model reads"):
        warn_overfull_splits({"train.jsonl": posts}, kinds, 8)


def test_a_stopped_run_names_faim_train_only_where_that_command_was_run() -> None:
    assert stopped_run(RESUME_CALL) == "faim.train"
    assert stopped_run(resume_command("recipe.yaml", [])) == "faim train"


def test_workers_reading_no_kind_as_frozen_kinds_come_from_the_cache_and_others_train_are_warned_of(
    tmp_path: Path,
) -> None:
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path, num_workers=2)
    recipe["model"]["encoders"]["text"]["freeze"] = True  # comments share it; image trains
    model = faim.build(recipe).model
    with pytest.warns(FaimWarning) as warned:
        warn_workers_idle(faim.Recipe.from_dict(recipe), model)
    assert [str(w.message) for w in warned] == [
        "<dict>: train.num_workers: 2: the embeddings of comments, text come from the cache (train.cache_embeddings), "
        "so image, whose encoder trains, is read and preprocessed in the training process, not in worker processes, "
        "which embed only the posts not cached yet; set train.cache_embeddings: false to read every kind in the "
        "workers (the frozen encoders then run every epoch), or train.num_workers: 0"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for setting in ("train.num_workers=0", "train.cache_embeddings=false", "model.encoders.image.freeze=true"):
            warn_workers_idle(faim.Recipe.from_dict(recipe).override([setting]), faim.build(recipe, [setting]).model)


def test_workers_are_not_warned_of_for_metadata_read_in_the_training_process(tmp_path: Path) -> None:
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path, num_workers=2)
    meta = {"type": "meta_numeric", "fields": ["likes"], "dim": 8}  # its numbers are read as the post is, at no cost
    recipe["model"] |= {"encoders": {"text": {"type": "tiny_text", "dim": 32, "freeze": True}, "meta": meta}}
    recipe["model"]["fusion"] = {"type": "concat"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_workers_idle(faim.Recipe.from_dict(recipe), faim.build(recipe).model)
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path, num_workers=2)
    recipe["model"]["encoders"] |= {"meta": meta}
    recipe["model"]["encoders"]["image"]["freeze"] = True
    with pytest.warns(FaimWarning, match=r"image come from .*, so comments, text, whose encoders train, are read and"):
        warn_workers_idle(faim.Recipe.from_dict(recipe), faim.build(recipe).model)
