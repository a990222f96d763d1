"""Shared fixtures: generated multimodal data and tiny recipes that train in seconds."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from faim.demo_data import make_demo_data

TORCH_STACK = ("torch", "transformers", "timm", "torchvision", "lightning", "pytorch_lightning", "sklearn")
"""What an install without the ``torch`` extra lacks, as far as the runtime's tests are concerned."""

BLOCKER = """
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {packages!r}:
            raise ModuleNotFoundError(f"{{name}} is blocked", name=name)

sys.meta_path.insert(0, Blocker())
"""


def without_packages(folder: Path, packages: tuple[str, ...] = TORCH_STACK) -> dict[str, str]:
    """An environment in which every Python process, spawned workers included, fails to import ``packages`` as if
    they were not installed (``ModuleNotFoundError`` saying "is blocked"): a ``sitecustomize`` written to ``folder``
    and put on ``PYTHONPATH``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(BLOCKER.format(packages=packages), encoding="utf-8")
    return os.environ | {"PYTHONPATH": str(folder)}


@pytest.fixture(autouse=True)
def global_random_state_restored() -> Iterator[None]:
    """Each test leaves Python's, numpy's and torch's global random generators as it found them, so a test that
    seeds them for its own data does not decide what the tests after it draw (nor does the order they run in)."""
    import random

    import numpy as np
    import torch

    states = random.getstate(), np.random.get_state(), torch.random.get_rng_state()
    yield
    random.setstate(states[0])
    np.random.set_state(states[1])
    torch.random.set_rng_state(states[2])


@pytest.fixture
def label_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The data each check that posts carry a label (``faim.data.post.check_labelled``) names, in the order made: the
    check is counted wherever faim's modules take it from, those imported before the test and after."""
    import sys

    from faim.data import post

    check, checked = post.check_labelled, []

    def counted(posts: Any, tasks: Any, where: str, *args: Any) -> None:
        checked.append(where)
        check(posts, tasks, where, *args)

    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "faim" and getattr(module, "check_labelled", None) is check:
            monkeypatch.setattr(module, "check_labelled", counted)
    return checked


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Train/validation JSONL (+ images) whose label needs caption and picture together."""
    return make_demo_data(tmp_path_factory.mktemp("demo"), n_train=400, n_validation=160, seed=1)


def tiny_recipe(data: dict[str, Path], output_dir: Path, **train: Any) -> dict[str, Any]:
    """A tiny multimodal recipe over ``data`` (random tiny encoders, attention fusion)."""
    return {
        "data": {
            "type": "jsonl",
            "train": str(data["train"]),
            "validation": str(data["validation"]),
            "columns": {"labels": {"harmful": "label"}, "meta": ["topic"]},
        },
        "model": {
            "encoders": {
                "text": {"type": "tiny_text", "dim": 32},
                "image": {"type": "tiny_image", "dim": 16},
                "comments": "text",
            },
            "fusion": {"type": "attention", "dim": 32, "num_heads": 2},
            "heads": {"harmful": {"type": "binary", "labels": ["benign", "harmful"], "hidden_dim": 32}},
        },
        "train": {
            "max_epochs": 3,
            "batch_size": 32,
            "lr": 0.003,
            "output_dir": str(output_dir),
            "cache_dir": str(output_dir / "cache"),
            "log_every_n_steps": 1,
        }
        | train,
        "eval": {"slice": "topic"},
    }


def frozen_tiny_recipe(data: dict[str, Path], output_dir: Path) -> dict[str, Any]:
    """``tiny_recipe`` with its text and image encoders frozen (their embeddings cached, as the probes read them)."""
    recipe = tiny_recipe(data, output_dir)
    for kind in ("text", "image"):
        recipe["model"]["encoders"][kind]["freeze"] = True
    return recipe


@pytest.fixture
def write_recipe(tmp_path: Path):
    """Write a recipe mapping to a YAML file and return its path."""

    def write(recipe: dict[str, Any], name: str = "recipe.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def tiny_model_dir(demo_data: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained tiny multimodal model saved as an artifact (weights seeded)."""
    import torch

    import faim

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("tiny_model")
    detector = faim.build(tiny_recipe(demo_data, root / "run"))
    detector.save(str(root / "model"))
    return root / "model"


@pytest.fixture(scope="session")
def unlabelled_split_model_dir(demo_data: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tiny_model_dir``'s model, its recipe's validation split the demo's posts with every label left empty."""
    import json

    import faim

    root = tmp_path_factory.mktemp("unlabelled_split")
    rows = [json.loads(line) | {"label": None} for line in demo_data["validation"].read_text().splitlines()]
    validation = root / "validation.jsonl"
    validation.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"validation": validation}, root / "run")
    recipe["data"]["image_root"] = str(demo_data["validation"].parent)
    faim.build(recipe).save(str(root / "model"), faim.Recipe.from_dict(recipe))
    return root / "model"


def refused_source_recipe(data: dict[str, Path], output_dir: Path) -> dict[str, Any]:
    """``tiny_recipe`` reading its data through a ``concat`` source given an ``evaluate_on`` its constructor refuses
    (``data: concat: evaluate_on must be one of first, all, got 'nope'``), which no check of the recipe reads."""
    recipe = tiny_recipe(data, output_dir)
    recipe["data"] = {"type": "concat", "sources": [recipe["data"], recipe["data"]], "evaluate_on": "nope"}
    return recipe


@pytest.fixture(scope="session")
def refused_source_model_dir(demo_data: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tiny_model_dir``'s model saved with ``refused_source_recipe`` as its recipe."""
    import faim

    root = tmp_path_factory.mktemp("refused_source")
    recipe = refused_source_recipe(demo_data, root / "run")
    faim.build(recipe).save(str(root / "model"), faim.Recipe.from_dict(recipe))
    return root / "model"


def shared_picture_posts(demo_data: dict[str, Path]) -> list:
    """Validation posts in groups of four that show one picture (the group's first); every fifth has none."""
    from faim.data.sources import read_posts

    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))
    pictures = [list(post.images) for post in posts]
    for index, post in enumerate(posts):
        post.images = [] if index % 5 == 4 else pictures[index - index % 4]
    return posts


@pytest.fixture(scope="session")
def written_embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder filled as training fills it, once: two frozen tiny random text encoders (``dim`` 8 and 16),
    each over two lists of posts (five and three, one embedding a post), so two encoders of two files each. Tests
    that change it take a copy (``embedding_cache``)."""
    import torch

    from faim import Detector, WholePostModel
    from faim.data.post import as_posts
    from faim.data.targets import TaskSpec
    from faim.encoders.tiny_text import TinyTextEncoder
    from faim.fusion import ConcatFusion
    from faim.tasks import BinaryHead
    from faim.training.cache import cached_embeddings

    folder = tmp_path_factory.mktemp("written") / "cache"
    torch.manual_seed(0)
    for dim in (8, 16):
        encoder = TinyTextEncoder(dim=dim, freeze=True)
        model = WholePostModel({"text": encoder}, ConcatFusion({"text": dim}), {"t": BinaryHead(dim)})
        collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
        for first, count in ((0, 5), (10, 3)):
            posts = as_posts([{"id": str(n), "text": f"post {n}"} for n in range(first, first + count)])
            cached_embeddings(model, collator, posts, folder)
    return folder


@pytest.fixture
def embedding_cache(written_embedding_cache: Path, tmp_path: Path) -> Path:
    """A copy of ``written_embedding_cache`` of the test's own, its files' times as they were."""
    folder = tmp_path / "cache"
    folder.mkdir()
    for path in written_embedding_cache.iterdir():
        copy = folder / path.name
        copy.write_bytes(path.read_bytes())
        os.utime(copy, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))
    return folder


@pytest.fixture
def unlink_refused(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Call it with a path: ``Path.unlink`` then refuses to remove that one (``PermissionError``), as a system
    refuses a file its user may not remove, and removes any other."""
    unlink = Path.unlink

    def refuse(refused: Path) -> None:
        def refusing(path: Path, missing_ok: bool = False) -> None:
            if path == refused:
                raise PermissionError(13, "Permission denied", str(path))
            unlink(path, missing_ok)

        monkeypatch.setattr(Path, "unlink", refusing)

    return refuse


def pooling_detector(
    demo_data: dict[str, Path], tmp_path: Path, head: str = "binary", fused: list[str] | None = None
) -> tuple[Any, list]:
    """A tiny detector (its head of type ``head``, its fusion reading the kinds ``fused``, default all) pooling posts
    that show the same picture, calibrated on ``shared_picture_posts``."""
    import torch

    import faim
    from faim.training.loaders import make_loader

    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"pool_by_image": 1.0, "logit_shift": True}  # the same picture only
    recipe["model"]["heads"]["harmful"]["type"] = head
    if fused:
        recipe["model"]["fusion"]["kinds"] = fused
    detector = faim.build(recipe)
    posts = shared_picture_posts(demo_data)
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    detector.calibrate(loader, faim.Recipe.from_dict(recipe).eval)
    return detector, posts


def calibrated(demo_data: dict[str, Path], tmp_path: Path, logit_shift: bool) -> tuple[Any, list]:
    """A tiny detector calibrated on the validation posts (with a logit shift when ``logit_shift``), and them."""
    import torch

    import faim
    from faim.data.sources import read_posts
    from faim.training.loaders import make_loader

    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"logit_shift": logit_shift}
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    detector.calibrate(loader, faim.Recipe.from_dict(recipe).eval)
    return detector, posts


def overconfident_binary(n: int = 5000, scale: float = 4.0, seed: int = 0) -> tuple[Any, Any]:
    """Labels drawn from ``sigmoid(z)`` and logits reported as ``scale * z`` (overconfident for scale > 1)."""
    import numpy as np
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 1.5, size=n)
    y = (rng.uniform(size=n) < expit(z)).astype(int)
    return scale * z, y


def tiny_hate_recipe(data: dict[str, Any], root: Path) -> dict[str, Any]:
    """A tiny frozen text recipe with one binary ``hate`` head over ``data``, its run and cache under ``root``."""
    return {
        "data": data,
        "model": {
            "encoders": {"text": {"type": "tiny_text", "dim": 16, "freeze": True}},
            "fusion": {"type": "concat"},
            "heads": {"hate": {"type": "binary", "labels": ["not-hate", "hate"], "hidden_dim": 16}},
        },
        "train": {"max_epochs": 2, "batch_size": 32, "output_dir": str(root / "run"), "cache_dir": str(root / "cache")},
        "eval": {"threshold_objective": "macro_f1", "languages": False},
    }


def export_posts() -> list[dict[str, Any]]:
    """Posts with every element kind, and without some: several pictures, comments, metadata with a field missing,
    no text, no metadata, leetspeak and a homoglyph; none holds nothing (scoring refuses such a post), but a model
    reading some kinds reads nothing of some of them: score ``detector.readable(export_posts())[0]``."""
    import io

    from PIL import Image

    def picture(colour: tuple[int, int, int], size: tuple[int, int]) -> bytes:
        buffer = io.BytesIO()
        Image.new("RGB", size, colour).save(buffer, format="PNG")
        return buffer.getvalue()

    red, blue = picture((220, 30, 30), (40, 24)), picture((20, 40, 200), (24, 40))
    return [
        {
            "id": "full",
            "text": "those people h4t3 us",
            "images": [red],
            "comments": ["so true", "no"],
            "meta": {"likes": 3, "shares": 1},
        },
        {"id": "text-only", "text": "just words, with a Cyrillic h\u0430te", "meta": {"likes": 0}},
        {"id": "pictures", "images": [red, blue, red], "meta": {"shares": 40}},
        {"id": "picture-only", "images": [blue]},
        {"id": "comments", "text": "a caption", "comments": ["one", "two", "three"]},
    ]


def edited_model(model: Path, target: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    """A copy of the export or saved model ``model`` at ``target`` whose manifest (``faim-export.json``, else
    ``faim.json``) ``edit`` changed in place, sealed again as an export or a save writes it (so only the change is
    refused, not the seal)."""
    import json
    import shutil

    from faim.file_digests import SEAL, sealed

    copy = Path(shutil.copytree(model, target))
    path = copy / "faim-export.json" if (copy / "faim-export.json").is_file() else copy / "faim.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(sealed({k: v for k, v in manifest.items() if k != SEAL})))
    return copy


def check_rows_in_input_order(scorer: Any) -> None:
    """``scorer`` (a ``Detector``, or an export loaded by ``faim.runtime``) scores and embeds ``export_posts()`` two at
    a time, batched shortest text first, and gives each row back in input order, equal to the post scored alone."""
    posts = export_posts()
    rows, embeddings = scorer.score(posts, batch_size=2), scorer.embed(posts, batch_size=2)
    assert [row["id"] for row in rows] == [post["id"] for post in posts]
    for post, row, embedding in zip(posts, rows, embeddings):
        alone = scorer.score([post])[0]
        assert row["harm"] == pytest.approx(alone["harm"], abs=1e-5)
        assert row["topic"] == pytest.approx(alone["topic"], abs=1e-5)
        assert embedding == pytest.approx(scorer.embed([post])[0], abs=1e-5)


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny detector with every element kind (text folding homoglyphs and leetspeak, pictures, comments read by the
    text encoder, numeric metadata), attention fusion, a binary, a multiclass and a multilabel head and a calibration
    that is not the identity, saved, and exported with ``faim export``: ``(saved model, export)``."""
    import torch

    from faim import Detector, WholePostModel
    from faim.calibration.fit import Calibration
    from faim.cli.main import main
    from faim.data.targets import TaskSpec
    from faim.encoders.meta_numeric import MetaNumericEncoder
    from faim.encoders.tiny_image import TinyImageEncoder
    from faim.encoders.tiny_text import TinyTextEncoder
    from faim.fusion import AttentionFusion
    from faim.tasks import BinaryHead, MulticlassHead, MultilabelHead

    torch.manual_seed(0)
    encoders = {
        "text": TinyTextEncoder(dim=16, fold_confusables=True, fold_leetspeak=True),
        "image": TinyImageEncoder(dim=8),
        "meta": MetaNumericEncoder(["likes", "shares"], shares=True, dim=8),
    }
    fusion = AttentionFusion({"text": 16, "image": 8, "comments": 16, "meta": 8}, dim=16, num_heads=2)
    heads = {"harm": BinaryHead(16), "topic": MulticlassHead(16, num_classes=3), "flags": MultilabelHead(16, 2)}
    model = WholePostModel(encoders, fusion, heads, routes={"comments": "text"})
    tasks = [
        TaskSpec("harm", "binary", ("no", "yes")),
        TaskSpec("topic", "multiclass", ("a", "b", "c")),
        TaskSpec("flags", "multilabel", ("spam", "abuse")),
    ]
    calibration = Calibration({"harm": 0.4}, {"harm": 1.7, "topic": 0.8, "flags": 1.0}, {"harm": 0.3})
    root = tmp_path_factory.mktemp("exported")
    Detector(model, tasks, calibration).save(root / "model")
    assert main(["export", str(root / "model"), "-o", str(root / "export")]) == 0
    return root / "model", root / "export"


OVERFLOWING_LIKES = 1e30
"""A count of likes whose features overflow ``overflowing``'s model to scores (logits) that are not finite."""


def overflowing_posts() -> list[dict[str, Any]]:
    """Three posts, the second (``viral``) holding ``OVERFLOWING_LIKES``: ``overflowing``'s model gives its logits of
    both tasks as NaN, the others' finite."""
    likes = [3, OVERFLOWING_LIKES, 0]
    return [{"id": name, "text": f"a {name} post", "meta": {"likes": n}} for name, n in zip(["a", "viral", "b"], likes)]


@pytest.fixture(scope="session")
def overflowing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny detector reading text and a count of likes, with a binary and a multiclass head, whose projection of
    ``log1p(likes)`` is so large that a post of ``OVERFLOWING_LIKES`` overflows float32 (infinite features, NaN
    logits), as a diverged model meeting a value beyond those it was trained on does; saved, and exported with
    ``faim export``: ``(saved model, export)``."""
    import torch

    from faim import Detector, WholePostModel
    from faim.cli.main import main
    from faim.data.targets import TaskSpec
    from faim.encoders.meta_numeric import MetaNumericEncoder
    from faim.encoders.tiny_text import TinyTextEncoder
    from faim.fusion import ConcatFusion
    from faim.tasks import BinaryHead, MulticlassHead

    torch.manual_seed(0)
    meta = MetaNumericEncoder(["likes"], dim=8)
    with torch.no_grad():
        meta.projection[0].weight[:, 0] = 1e37  # log1p(1e30) = 69 of these passes float32's 3.4e38
    encoders = {"text": TinyTextEncoder(dim=16), "meta": meta}
    heads = {"harm": BinaryHead(16), "topic": MulticlassHead(16, num_classes=3)}
    model = WholePostModel(encoders, ConcatFusion({"text": 16, "meta": 8}, dim=16), heads)
    tasks = [TaskSpec("harm", "binary", ("no", "yes")), TaskSpec("topic", "multiclass", ("a", "b", "c"))]
    root = tmp_path_factory.mktemp("overflowing")
    Detector(model, tasks).save(root / "model")
    assert main(["export", str(root / "model"), "-o", str(root / "export")]) == 0
    return root / "model", root / "export"


def overflowing_run(model: Path, root: Path, *options: str, command: str = "score") -> list[dict]:
    """The output rows of ``overflowing_posts()`` written to ``root/dump.jsonl`` and scored by ``faim score`` (or
    ``command``) with ``model`` and ``options``, in input order."""
    import json

    import pyarrow.parquet as pq

    from faim.cli.main import main

    dump = root / "dump.jsonl"
    dump.write_text("".join(json.dumps(post) + "\n" for post in overflowing_posts()), encoding="utf-8")
    assert main([command, str(model), str(dump), "-o", str(root / "out"), "--workers", "1", *options]) == 0
    return pq.read_table(root / "out").to_pylist()


def check_overflowing_rows(rows: list[dict], dump: Path) -> None:
    """The row of the post whose scores are not finite (``overflowing_posts()``'s second) records them as its error,
    naming it and its tasks; the others are scored."""
    assert [(row["id"], row["error_kind"]) for row in rows] == [("a", None), ("viral", "scores"), ("b", None)]
    said = "the model's scores (logits) of tasks 'harm', 'topic' are not finite (NaN or infinite)"
    assert rows[1]["error"].startswith(f"{dump}:2 (post id='viral'): {said}")
    assert rows[1]["harm"] is None and rows[1]["topic.a"] is None
    for row in rows[::2]:
        assert 0 <= row["harm"] <= 1 and row["topic.a"] + row["topic.b"] + row["topic.c"] == pytest.approx(1)


def damaged_parquet(path: Path, rows: int, group_rows: int, group: int, column: str = "text") -> Path:
    """A Parquet file of ``rows`` rows (``id``: ``"0"``, ``"1"``..., ``text`` and ``note``), ``group_rows`` to a row
    group, the header of the first page of ``column`` in its row group ``group`` overwritten, so that pyarrow cannot
    read that column there."""
    numbers = range(rows)
    table = pa.table({"id": [str(i) for i in numbers], "text": [f"post {i}" for i in numbers], "note": ["n"] * rows})
    pq.write_table(table, path, row_group_size=group_rows)
    chunk = pq.ParquetFile(path).metadata.row_group(group).column(table.schema.names.index(column))
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset : chunk.data_page_offset + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    return path


def synced_and_renamed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int | str]]:
    """What is done to the disk from now on: each file or folder synced (``os.fsync``) by its inode, each rename
    (``os.replace``) by the name given."""
    done: list[tuple[str, int | str]] = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: done.append(("fsync", os.fstat(fd).st_ino)) or fsync(fd))
    monkeypatch.setattr(os, "replace", lambda old, new: done.append(("replace", Path(new).name)) or replace(old, new))
    return done
