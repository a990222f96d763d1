"""The runtime scores an export without torch, transformers or timm, checks every file's hash, names a bad post
and refuses what it does not do."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from conftest import check_rows_in_input_order, edited_model, export_posts, without_packages
from PIL import Image

import faim.runtime
from faim import Detector
from faim.notices import FaimWarning
from faim.runtime import ExportError, PostError

SCRIPT = """
import json, sys
import faim.runtime
rows = faim.runtime.load(sys.argv[1]).score(json.loads(sys.stdin.read()))
print(json.dumps(rows))
"""


def test_the_runtime_scores_with_torch_transformers_and_timm_blocked(exported: tuple[Path, Path], tmp_path) -> None:
    model_dir, export_dir = exported
    posts = export_posts()
    images = tmp_path / "images"
    images.mkdir()
    for post in posts:  # pictures as files, as a dump holds them
        names = []
        for index, image in enumerate(post.get("images", [])):
            (images / f"{post['id']}-{index}.png").write_bytes(image)
            names.append(str(images / f"{post['id']}-{index}.png"))
        post["images"] = names
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(export_dir)],
        input=json.dumps(posts),
        env=without_packages(tmp_path / "blocker"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    served = json.loads(result.stdout)
    eager = Detector.load(model_dir).score(posts)
    assert [row["id"] for row in served] == [row["id"] for row in eager]
    assert all(abs(a["harm"] - b["harm"]) <= 1e-4 for a, b in zip(served, eager))


def test_each_module_of_the_package_is_an_attribute_of_it_once_the_package_is_imported() -> None:
    script = "import faim.runtime as r; print(r.model.load is r.load, r.preprocess.__name__, r.pieces.__name__)"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "faim.runtime.preprocess", "faim.runtime.pieces"]


WITHOUT_ONNXRUNTIME = """
import json, sys
sys.modules["onnxruntime"] = None  # as where it is not installed: importing it raises ModuleNotFoundError
import faim.runtime
found = {"hasattr": [hasattr(faim.runtime, name) for name in ("model", "load", "ExportedModel", "bundle")]}
try:
    faim.runtime.load
except AttributeError as error:
    found["load"] = [type(error).__name__, str(error), type(error.__cause__).__name__]
try:
    import faim.runtime.model
except ModuleNotFoundError as error:
    found["import"] = error.name
print(json.dumps(found))
"""


def test_without_onnxruntime_the_package_has_no_load_and_asking_for_it_says_what_to_install() -> None:
    result = subprocess.run([sys.executable, "-c", WITHOUT_ONNXRUNTIME], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["hasattr"] == [False, False, False, True]
    needs = "faim.runtime.load needs the Python package 'onnxruntime', not installed: pip install 'faim-sdk[runtime]'"
    assert found["load"] == ["RuntimeNotInstalled", needs, "ModuleNotFoundError"]
    assert found["import"] == "onnxruntime"


def test_a_modified_file_fails_loading_naming_it(exported: tuple[Path, Path], tmp_path: Path) -> None:
    copy = shutil.copytree(exported[1], tmp_path / "export")
    graph = copy / "fusion.onnx"
    graph.write_bytes(graph.read_bytes()[:-1] + b"\0")
    with pytest.raises(ExportError, match="fusion.onnx: sha256 does not match"):
        faim.runtime.load(copy)


def junk_graph(copy: Path, manifest: dict, written_with: str | None) -> None:
    """Make the fusion graph of the export ``copy`` bytes onnxruntime cannot open, listed with their sha256 (as a
    graph a later onnxruntime wrote is to an earlier one), the export written with onnxruntime ``written_with``
    (``None``: not recorded, as an earlier faim wrote exports)."""
    (copy / "fusion.onnx").write_bytes(b"not a graph")
    manifest["files"]["fusion.onnx"] = hashlib.sha256(b"not a graph").hexdigest()
    manifest.pop("onnxruntime_version")
    if written_with is not None:
        manifest["onnxruntime_version"] = written_with


@pytest.mark.parametrize(
    ("written_with", "said"),
    [
        (
            "99.1.0",
            "the export was written with onnxruntime 99.1.0: install that one (pip install 'onnxruntime==99.1.0')",
        ),
        (None, "the export does not record the onnxruntime it was written with: install the one it was exported with"),
    ],
)
def test_a_graph_onnxruntime_cannot_open_fails_loading_naming_it_and_the_onnxruntimes(
    exported: tuple[Path, Path], tmp_path: Path, written_with: str | None, said: str
) -> None:
    assert json.loads((exported[1] / "faim-export.json").read_text())["onnxruntime_version"] == onnxruntime.__version__
    copy = edited_model(exported[1], tmp_path / "export", lambda m: junk_graph(tmp_path / "export", m, written_with))
    installed = onnxruntime.__version__
    with pytest.raises(ExportError) as refused:
        faim.runtime.load(copy)
    opening = f"{copy / 'fusion.onnx'}: onnxruntime {installed} cannot open this graph ("
    assert str(refused.value).startswith(opening) and "INVALID_PROTOBUF" in str(refused.value)
    assert str(refused.value).endswith(
        f"); if the onnxruntime installed is what differs (the reason above may be another: memory, a damaged "
        f"file), {said}, or export the model again where onnxruntime {installed} is installed"
    )


def test_an_edited_threshold_fails_loading_naming_the_manifest(exported: tuple[Path, Path], tmp_path: Path) -> None:
    copy = shutil.copytree(exported[1], tmp_path / "export")
    manifest = json.loads((copy / "faim-export.json").read_text())
    manifest["tasks"][0]["threshold"] = 0.99
    (copy / "faim-export.json").write_text(json.dumps(manifest))
    with pytest.raises(ExportError, match=r"faim-export.json: modified after it was written"):
        faim.runtime.load(copy)


def text_preprocessing(manifest: dict) -> dict:
    """The text encoder's preprocessing entry of an export's manifest."""
    return manifest["encoders"]["text"]["parts"][0]["preprocess"]


def image_preprocessing(manifest: dict) -> dict:
    """The picture encoder's preprocessing entry of an export's manifest."""
    return manifest["encoders"]["image"]["parts"][0]["preprocess"]


def meta_preprocessing(manifest: dict) -> dict:
    """The metadata encoder's preprocessing entry of an export's manifest."""
    return manifest["encoders"]["meta"]["parts"][0]["preprocess"]


@pytest.mark.parametrize(
    ("edit", "wrong"),
    [
        (lambda m: image_preprocessing(m).update(interpolation="sinc"), "encoders.image: interpolation 'sinc' is"),
        (lambda m: image_preprocessing(m).pop("interpolation"), "encoders.image: no 'interpolation'"),
        (lambda m: image_preprocessing(m).update(type="video"), "encoders.image: preprocessing type 'video' is not"),
        (lambda m: m["fusion"]["kinds"].append("video"), "kinds: no 'video'"),
        (lambda m: m.update(max_elements="many"), "max_elements: expected a whole number of at least 1, got 'many'"),
        (lambda m: m.update(max_elements=2.7), "max_elements: expected a whole number of at least 1, got 2.7"),
        (lambda m: m.update(max_elements=True), "max_elements: expected a whole number of at least 1, got True"),
        (lambda m: m.update(max_elements=0), "max_elements: expected a whole number of at least 1, got 0"),
        (lambda m: m.update(max_elements=-1), "max_elements: expected a whole number of at least 1, got -1"),
        (lambda m: m["fusion"].update(dim=15.7), "fusion: dim: expected a whole number of at least 1, got 15.7"),
        (lambda m: m["encoders"]["text"].update(dim=True), "encoders.text: dim: expected a whole number of at least 1"),
        (lambda m: m.update(files=[]), "files: expected a mapping of file name to sha256, got a list"),
        (lambda m: image_preprocessing(m).update(crop_pct="wide"), "encoders.image: crop_pct 'wide' is not a number"),
        (lambda m: image_preprocessing(m).update(crop_pct=0), "encoders.image: crop_pct 0 is not a number above 0"),
        (lambda m: image_preprocessing(m).update(size=-5), "encoders.image: size -5 is not a whole number"),
        (lambda m: image_preprocessing(m).update(mean=[0.5]), "encoders.image: mean [0.5] is not 3 numbers"),
        (lambda m: m["tasks"][0].update(threshold="high"), "tasks: task 'harm': threshold 'high' is not a number"),
        (lambda m: m["tasks"][0].update(type="ranking"), "tasks: task 'harm': type 'ranking' is not binary, multic"),
        (lambda m: m["tasks"][0].update(labels="ny"), "tasks: task 'harm': labels 'ny' is not a list of label names"),
        (lambda m: m["tasks"][0].update(labels=[0, 1]), "tasks: task 'harm': labels [0, 1] is not a list of label"),
        (lambda m: m["tasks"][0].update(labels=["no"]), "tasks: task 'harm' (binary): expected two labels (negative,"),
        (lambda m: m["tasks"][1].update(labels=[]), "tasks: task 'topic' (multiclass): expected labels, got []"),
        (lambda m: m.update(tasks=[]), "tasks: expected at least one task, got []"),
        (lambda m: text_preprocessing(m).update(leetspeak="yes"), "encoders.text: leetspeak 'yes' is not true or"),
        (lambda m: meta_preprocessing(m).update(fields="likes"), "encoders.meta: fields 'likes' is not a list of"),
        (lambda m: meta_preprocessing(m).update(shares="yes"), "encoders.meta: shares 'yes' is not true or false"),
    ],
)
def test_a_manifest_holding_what_no_export_writes_fails_loading_naming_it_and_the_field(
    exported: tuple[Path, Path], tmp_path: Path, edit: Callable[[dict], object], wrong: str
) -> None:
    copy = edited_model(exported[1], tmp_path / "export", edit)
    with pytest.raises(ExportError, match=f"^{re.escape(str(copy / 'faim-export.json'))}: {re.escape(wrong)}"):
        faim.runtime.load(copy)


@pytest.mark.parametrize(
    ("edit", "wrong"),
    [
        (lambda m: m["tasks"][1].update(labels=["a", "b"]), "tasks: task 'topic' (multiclass): labels: ['a', 'b'] do"),
        (lambda m: m["tasks"][1].update(labels=["a", "b", "c", "d"]), "tasks: task 'topic' (multiclass): labels: ['a'"),
        (lambda m: m["tasks"][2].update(labels=["spam"]), "tasks: task 'flags' (multilabel): labels: ['spam'] do not"),
        (lambda m: m["tasks"][1].update(name="subject"), "tasks: task 'subject': its graph gives no 'subject.logits'"),
        (lambda m: m["encoders"]["image"].update(dim=9), "encoders.image: dim: 9 is not the size of its graphs' emb"),
        (lambda m: m["fusion"].update(dim=17), "fusion: dim: 17 is not the size of its graph's 'embedding' ['B', 16]"),
        (
            lambda m: m["encoders"]["text"]["parts"][0].update(inputs=["ids", "attention_mask"]),
            "encoders.text: parts[0]: inputs: ['attention_mask', 'ids'] are not its graph's ['attention_mask', 'input",
        ),
        (lambda m: m["fusion"]["kinds"].remove("meta"), "fusion: inputs: ['comments.embeddings', 'comments.mask', 'im"),
    ],
)
def test_a_manifest_its_graphs_contradict_fails_loading_naming_it_and_the_field(
    exported: tuple[Path, Path], tmp_path: Path, edit: Callable[[dict], object], wrong: str
) -> None:
    copy = edited_model(exported[1], tmp_path / "export", edit)
    with pytest.raises(ExportError, match=f"^{re.escape(str(copy / 'faim-export.json'))}: {re.escape(wrong)}"):
        faim.runtime.load(copy)


def test_a_manifest_entry_refused_keeps_the_error_that_refused_it_as_its_cause(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    copy = edited_model(exported[1], tmp_path / "export", lambda m: image_preprocessing(m).update(crop_pct=0))
    with pytest.raises(ExportError, match="encoders.image: crop_pct 0") as refused:
        faim.runtime.load(copy)
    assert isinstance(refused.value.__cause__, ValueError)


def test_a_fault_opening_a_graph_or_building_a_tokenizer_is_raised_as_it_is_not_as_the_manifests(
    exported: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def unopenable(path: Path) -> None:  # as a graph loader of another torch version fails
        raise AttributeError("module 'torch' has no attribute 'export'")

    with pytest.raises(AttributeError, match="^module 'torch' has no attribute 'export'$"):
        faim.runtime.model.ExportedModel(exported[1], open_graph=unopenable)

    def unreadable(path: str) -> None:
        raise TypeError("a fault of the tokenizers package")

    monkeypatch.setattr(faim.runtime.preprocess.Tokenizer, "from_file", unreadable)
    with pytest.raises(TypeError, match="^a fault of the tokenizers package$"):
        faim.runtime.load(exported[1])


def graph_elsewhere(manifest: dict, listed: bool) -> None:
    """Make the fusion graph of ``manifest`` one in a folder beside the export, ``listed`` with its sha256 or not."""
    if listed:
        manifest["files"]["../elsewhere/fusion.onnx"] = manifest["files"]["fusion.onnx"]
    manifest["fusion"]["graph"] = "../elsewhere/fusion.onnx"


UNLISTED = "is not a file listed under files"


@pytest.mark.parametrize(
    ("edit", "wrong"),
    [
        (lambda m: m["fusion"].update(graph="missing.onnx"), f"fusion: graph 'missing.onnx' {UNLISTED}"),
        (lambda m: graph_elsewhere(m, listed=False), f"fusion: graph '../elsewhere/fusion.onnx' {UNLISTED}"),
        (lambda m: graph_elsewhere(m, listed=True), "files: '../elsewhere/fusion.onnx' is not a path inside"),
        (lambda m: m["fusion"].update(graph=["fusion.onnx"]), f"fusion: graph ['fusion.onnx'] {UNLISTED}"),
        (lambda m: text_preprocessing(m).update(tokenizer="faim-export.json"), "encoders.text: tokenizer 'faim-exp"),
        (
            lambda m: text_preprocessing(m).update(confusables="/etc/hosts"),
            f"encoders.text: confusables '/etc/hosts' {UNLISTED}",
        ),
    ],
)
def test_a_file_the_manifest_names_that_its_verified_listing_does_not_hold_fails_loading_naming_the_field(
    exported: tuple[Path, Path], tmp_path: Path, edit: Callable[[dict], object], wrong: str
) -> None:
    shutil.copytree(exported[1], tmp_path / "elsewhere")  # an intact graph outside the export, read unchecked before
    copy = edited_model(exported[1], tmp_path / "export", edit)
    with pytest.raises(ExportError, match=f"^{re.escape(str(copy / 'faim-export.json'))}: {re.escape(wrong)}"):
        faim.runtime.load(copy)


@pytest.mark.parametrize(("given", "named"), [(None, "None"), (3, "an int"), (b"export", "a bytes")])
def test_what_is_no_path_given_for_an_export_is_refused_naming_its_type(given: object, named: str) -> None:
    said = f"expected an export's folder (a str or a Path), got {named}"
    with pytest.raises(TypeError, match=f"^{re.escape(said)}$"):
        faim.runtime.load(given)


def test_an_empty_path_given_for_an_export_is_refused_not_read_as_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    said = "expected an export's folder, got an empty path (a variable not set?); name a folder, . for this one"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        faim.runtime.load("")


def test_a_saved_model_is_not_an_export_and_the_message_says_what_to_do(exported: tuple[Path, Path]) -> None:
    with pytest.raises(ExportError, match="export it first with faim export"):
        faim.runtime.load(exported[0])


def test_a_bad_post_is_named_with_its_field(exported: tuple[Path, Path]) -> None:
    runtime = faim.runtime.load(exported[1])
    with pytest.raises(PostError, match="post id='bad'.*'meta'.*'likes' must be a number"):
        runtime.score([{"id": "good", "text": "fine"}, {"id": "bad", "text": "x", "meta": {"likes": "many"}}])
    with pytest.raises(PostError, match="post id='broken'.*'images'"):
        runtime.score([{"id": "broken", "images": [b"not a picture"]}])
    with pytest.raises(PostError, match="post id='cut'.*'comments': holds half of a UTF-16 surrogate pair"):
        runtime.score([{"id": "cut", "text": "fine", "comments": ["an emoji cut in two \ud83d"]}])


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"images": ["no-such-picture.png"]}, "field 'images': image 'no-such-picture.png'"),
        ({"comments": ["fine", "cut \ud83d"]}, "field 'comments': holds half of a UTF-16 surrogate pair"),
        ({"meta": {"likes": float("inf")}}, "field 'meta': meta field 'likes' must be finite"),
    ],
)
def test_a_post_the_runtime_would_stop_at_is_refused_before_it_runs_any_graph(
    bad: dict, said: str, exported: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the detector refuses it (tests/test_detector.py)."""
    runtime = faim.runtime.load(exported[1])
    runs = []
    monkeypatch.setattr(runtime, "run", lambda prepared: runs.append(prepared))
    posts = [{"id": str(n), "text": "a post " * n} for n in range(1, 5)]
    posts.append({"id": "last", "text": "the longest post, read last " * 3} | bad)
    for call in (runtime.score, runtime.embed, runtime.predict):
        with pytest.raises(PostError, match=rf"^post 4 \(post id='last'\) {re.escape(said)}"):
            call(posts, batch_size=1)
    assert not runs


def test_posts_holding_no_kind_or_meta_field_the_model_reads_are_warned_of_once_a_call_as_the_detector_does(
    exported: tuple[Path, Path],
) -> None:
    model_dir, export_dir = exported
    posts = [
        {"id": "1", "text": "hi", "meta": {"like_count": 3}},
        {"id": "2", "text": "hello", "meta": {"like_count": 1}},
    ]
    with warnings.catch_warnings(record=True) as eager:
        warnings.simplefilter("always")
        Detector.load(model_dir).score(posts, batch_size=1)
    said = [str(warning.message) for warning in eager if warning.category is FaimWarning]
    assert len(said) == 3  # no pictures, no comments, no likes or shares
    runtime = faim.runtime.load(export_dir)
    for call in (runtime.score, runtime.embed, runtime.predict):
        with warnings.catch_warnings(record=True) as served:
            warnings.simplefilter("always")
            call(posts, batch_size=1)  # a batch for each post: warned once all the same
        assert [str(warning.message) for warning in served if warning.category is FaimWarning] == said


def test_scoring_or_reading_pooled_by_picture_is_refused_with_what_to_use(exported: tuple[Path, Path]) -> None:
    """As ``faim.Detector`` takes it: ``readable(posts, pool_by_image=True)`` reads posts as scoring them so does."""
    runtime = faim.runtime.load(exported[1])
    for call in (runtime.score, runtime.readable):
        with pytest.raises(ValueError, match="pooled by picture is not available on the exported runtime"):
            call(export_posts(), pool_by_image=True)
    kept, errors = runtime.readable(export_posts(), pool_by_image=False)
    again, said = runtime.readable(export_posts())
    assert kept == again and list(map(str, errors)) == list(map(str, said))


def test_no_posts_give_no_rows_and_an_empty_embedding(exported: tuple[Path, Path]) -> None:
    runtime = faim.runtime.load(exported[1])
    assert runtime.score([]) == []
    assert runtime.embed([]).shape == (0, 16) and runtime.embed([]).dtype == np.float32


def test_no_posts_give_every_output_empty_shaped_as_a_batch_of_some_gives_it(exported: tuple[Path, Path]) -> None:
    runtime = faim.runtime.load(exported[1])
    ids, none = runtime.predict([])
    _, some = runtime.predict([{"id": "a", "text": "a post"}])
    assert ids == [] and list(none) == list(some)
    assert {name: (out.shape, out.dtype) for name, out in none.items()} == {
        name: ((0, *out.shape[1:]), out.dtype) for name, out in some.items()
    }
    assert none["harm.logits"].shape == (0,) and none["topic.logits"].shape == (0, 3)
    assert none["flags.probabilities"].shape == (0, 2)


def test_posts_batched_shortest_text_first_come_back_in_input_order(exported: tuple[Path, Path]) -> None:
    check_rows_in_input_order(faim.runtime.load(exported[1]))


def test_readable_sets_aside_a_post_holding_nothing_the_model_reads_as_empty(exported: tuple[Path, Path]) -> None:
    model = faim.runtime.ExportedModel(exported[1])
    kept, errors = model.readable([{"id": "read", "text": "a post"}, {"id": "blank", "text": "", "comments": []}])
    assert [post.id for post in kept] == ["read"]
    assert [(error.post_id, error.kind) for error in errors] == [("blank", "empty")]


def test_a_16_bit_grey_picture_scores_as_its_8_bit_twin(exported: tuple[Path, Path]) -> None:
    grey = np.arange(64, dtype=np.uint8).reshape(8, 8) * 4
    pictures = {}
    for name, samples in (("eight", grey), ("sixteen", grey.astype(np.uint16) * 257)):
        buffer = io.BytesIO()
        Image.fromarray(samples).save(buffer, "PNG")
        pictures[name] = buffer.getvalue()
    runtime = faim.runtime.load(exported[1])
    eight, sixteen = runtime.embed([{"id": name, "images": [picture]} for name, picture in pictures.items()])
    assert np.allclose(eight, sixteen, atol=1e-5)


def test_a_graph_not_telling_the_rank_of_an_output_loads_as_one_not_telling_its_shapes(
    exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnxruntime gives an output whose rank it cannot work out (a hand-made graph's, another exporter's) the shape
    ``[]``: it fits any size, as an unfixed dimension does, and is not refused as one of another size."""
    signature = faim.runtime.model.signature

    def rank_untold(graph):
        found = signature(graph)
        return found and (found[0], {name: () for name in found[1]})

    monkeypatch.setattr(faim.runtime.model, "signature", rank_untold)
    assert faim.runtime.load(exported[1]).tasks


def test_posts_holding_more_pictures_or_comments_than_the_model_reads_are_warned_of_once(
    exported: tuple[Path, Path],
) -> None:
    model = faim.runtime.load(exported[1])
    given = next(post for post in export_posts() if post.get("images") and post.get("meta"))
    picture = given["images"][0]
    read = {"id": "read", "text": "a post", "images": [picture] * 8, "comments": ["ok"], "meta": given["meta"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FaimWarning)
        model.score([read])
    with pytest.warns(FaimWarning) as said:
        model.embed([read, read | {"id": "more", "images": [picture] * 9}])
    assert [str(warning.message) for warning in said if warning.category is FaimWarning] == [
        "the posts given: 1 post holds more pictures or comments than the model reads of a post (up to 9): it reads "
        "the first 8 of each alone (the recipe's train.max_elements: 8), the rest unread; a model trained with a "
        "larger train.max_elements reads more"
    ]
