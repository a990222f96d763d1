"""Artifacts: save → load reproduces scores exactly; a modified or missing file fails by name."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
import torch
from conftest import edited_model, tiny_recipe

import faim
from faim import Recipe, file_digests, registry
from faim.artifact import ArtifactError, inside, read_recipe
from faim.artifact_manifest import fused_kinds, read_manifest
from faim.data.sources import read_posts
from faim.detector import Calibration
from faim.file_digests import SEAL, sealed
from faim.recipe import RecipeError, as_recipe, validate
from faim.tasks import BinaryHead
from faim.training.cache import part_identity
from faim.weights import sha256_file


@pytest.fixture
def saved(demo_data: dict[str, Path], tmp_path: Path) -> tuple[faim.Detector, Path]:
    torch.manual_seed(0)
    detector = faim.build(tiny_recipe(demo_data, tmp_path / "run"))
    detector.thresholds["harmful"] = 0.37
    detector.temperatures["harmful"] = 1.7
    detector.logit_shifts["harmful"] = -0.4
    directory = tmp_path / "model"
    detector.save(str(directory))
    return detector, directory


def test_round_trip_scores_are_identical(saved, demo_data) -> None:
    detector, directory = saved
    posts = list(read_posts(demo_data["validation"]))[:40]
    loaded = faim.load(directory)
    assert loaded.score(posts) == detector.score(posts)
    assert (loaded.embed(posts) == detector.embed(posts)).all()
    assert loaded.thresholds["harmful"] == 0.37 and loaded.temperatures["harmful"] == 1.7
    assert loaded.logit_shifts["harmful"] == -0.4


def test_a_loaded_model_saved_again_keeps_its_recipe_unless_given_another(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"logit_shift": True}
    faim.build(recipe).save(tmp_path / "model", Recipe.from_dict(recipe))
    loaded = faim.load(tmp_path / "model")
    loaded.save(tmp_path / "again")
    assert read_recipe(tmp_path / "again").to_dict() == read_recipe(tmp_path / "model").to_dict()
    assert read_recipe(tmp_path / "again").data["train"] == str(demo_data["train"])
    assert read_recipe(tmp_path / "again").eval.logit_shift
    other = Recipe.from_dict(tiny_recipe(demo_data, tmp_path / "other"))
    loaded.save(tmp_path / "other", other)
    assert read_recipe(tmp_path / "other").to_dict() == other.to_dict()


def test_the_recipe_given_to_save_may_be_a_mapping_or_a_file_as_build_takes(
    demo_data, tmp_path: Path, write_recipe
) -> None:
    detector = faim.build(tiny_recipe(demo_data, tmp_path / "run"))
    other = tiny_recipe(demo_data, tmp_path / "other")
    for given, directory in ((other, tmp_path / "mapping"), (write_recipe(other), tmp_path / "file")):
        detector.save(directory, given)
        assert read_recipe(directory).to_dict() == as_recipe(other).to_dict()


def test_manifest_lists_versions_tasks_and_hashes(saved) -> None:
    _, directory = saved
    manifest = json.loads((directory / "faim.json").read_text())
    assert manifest["faim_version"] == faim.__version__
    assert manifest["tasks"][0] == {
        "name": "harmful",
        "type": "binary",
        "labels": ["benign", "harmful"],
        "threshold": 0.37,
        "temperature": 1.7,
        "logit_shift": -0.4,
        "prior": None,
    }
    assert {"model.safetensors", "recipe.yaml"} <= set(manifest["files"])


def test_a_model_is_saved_and_loaded_where_transformers_is_not_installed(
    saved, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    detector, _ = saved
    manifest = json.loads((saved[1] / "faim.json").read_text())
    assert manifest["transformers_version"] == importlib.metadata.version("transformers")

    def not_installed(package: str) -> str:
        raise importlib.metadata.PackageNotFoundError(package)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    monkeypatch.setattr("faim.artifact.version", not_installed)
    detector.save(tmp_path / "again")
    assert json.loads((tmp_path / "again" / "faim.json").read_text())["transformers_version"] is None
    assert faim.load(tmp_path / "again").tasks == detector.tasks


@pytest.mark.parametrize("fused", [None, ["comments", "text"]])
def test_the_manifest_names_the_fused_kinds_and_a_model_saved_before_it_did_loads_and_has_them_from_its_recipe(
    fused: list[str] | None, demo_data, tmp_path: Path
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["fusion"] |= {"kinds": fused} if fused else {}
    faim.build(recipe).save(str(tmp_path / "model"))
    manifest = read_manifest(tmp_path / "model")
    expected = fused or ["comments", "image", "text"]
    assert manifest["fused_kinds"] == fused_kinds(tmp_path / "model", manifest) == expected
    del manifest["fused_kinds"]  # as a model saved before manifests named them
    (tmp_path / "model" / "faim.json").write_text(json.dumps(sealed(manifest)), encoding="utf-8")
    assert fused_kinds(tmp_path / "model", read_manifest(tmp_path / "model")) == expected
    assert faim.load(tmp_path / "model").model.fused_kinds == expected


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_every_file_of_a_saved_model_has_the_permissions_the_umask_gives_a_new_file(
    umask: int, demo_data, tmp_path: Path
) -> None:
    detector = faim.build(tiny_recipe(demo_data, tmp_path / "run"))
    before = os.umask(umask)
    try:
        detector.save(tmp_path / "model")
        (tmp_path / "opened").open("w").close()
    finally:
        os.umask(before)
    usual = stat.S_IMODE((tmp_path / "opened").stat().st_mode)
    assert usual == 0o666 & ~umask
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in (tmp_path / "model").rglob("*") if path.is_file()}
    assert "model.safetensors" in modes and modes == dict.fromkeys(modes, usual)


def test_a_failed_save_leaves_the_model_there_as_it_was_and_nothing_beside_it(saved, demo_data) -> None:
    _, directory = saved
    before = {path.name: path.read_bytes() for path in directory.iterdir()}
    recipe = tiny_recipe(demo_data, directory.parent / "run")
    recipe["model"]["encoders"] = {"text": {"type": "ngram_text", "dim": 8}}
    with pytest.raises(RuntimeError, match="ngram_text is not fitted"):
        faim.build(recipe).save(directory)  # its vocabulary is learnt from the training posts
    assert sorted(path.name for path in directory.parent.iterdir()) == ["model"]
    assert {path.name: path.read_bytes() for path in directory.iterdir()} == before


@pytest.mark.parametrize(
    ("change", "differs"),
    [
        ("head", r"model.heads.harmful \(heads.harmful.net.0.bias in the recipe's model alone"),
        ("recipe", r"model.heads.harmful \(heads.harmful.net.0.bias of shape \[32\] in this model, \[8\] in the"),
        ("tasks", r"the recipe's tasks \['harmful', 'other'\], the model's \['harmful'\]"),
    ],
)
def test_a_model_its_recipe_does_not_build_is_refused_naming_the_recipe_what_differs_and_the_model_there_is_kept(
    change: str, differs: str, saved
) -> None:
    _, directory = saved
    before = {path.name: path.read_bytes() for path in directory.iterdir()}
    loaded, recipe = faim.load(directory), read_recipe(directory).to_dict()
    if change == "head":  # a new head trained on stored embeddings
        loaded.model.heads["harmful"] = BinaryHead(loaded.model.fusion.output_dim)
    elif change == "recipe":
        recipe["model"]["heads"]["harmful"]["hidden_dim"] = 8
    else:
        recipe["model"]["heads"]["other"] = recipe["model"]["heads"]["harmful"]
    named = directory / "recipe.yaml" if change == "head" else "<dict>"  # the detector's own recipe, or the one given
    with pytest.raises(
        ValueError, match=rf"^{directory}: not saved: the model: section of the recipe {named} .*{differs}"
    ):
        loaded.save(directory, None if change == "head" else recipe)
    assert sorted(path.name for path in directory.parent.iterdir()) == ["model"]
    assert {path.name: path.read_bytes() for path in directory.iterdir()} == before


def test_tampered_weights_fail_the_hash_check(saved) -> None:
    _, directory = saved
    weights = directory / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(ArtifactError, match=r"model.safetensors: sha256 does not match faim.json"):
        faim.load(directory)


def test_reading_a_saved_recipe_checks_the_recipes_hash_and_the_seal_not_the_weights(saved) -> None:
    _, directory = saved
    weights = directory / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1])  # left to loading the model, which checks it
    assert read_recipe(directory).model["heads"]
    recipe = directory / "recipe.yaml"
    recipe.write_text(recipe.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"recipe.yaml: sha256 does not match faim.json"):
        read_recipe(directory)


def test_an_edited_threshold_fails_naming_the_manifest_and_a_manifest_written_unsealed_loads(saved) -> None:
    _, directory = saved
    manifest = json.loads((directory / "faim.json").read_text())
    manifest["tasks"][0]["threshold"] = 0.99
    (directory / "faim.json").write_text(json.dumps(manifest, indent=2))
    with pytest.raises(ArtifactError, match=r"faim.json: modified after it was written \(its tasks, thresholds"):
        faim.load(directory)
    del manifest[SEAL]  # as models were written before manifests were sealed
    (directory / "faim.json").write_text(json.dumps(manifest, indent=2))
    assert faim.load(directory).thresholds["harmful"] == 0.99


@pytest.mark.parametrize(
    ("edit", "wrong"),
    [
        (lambda m: m["tasks"][0].update(labels="bh"), "tasks: task 'harmful': labels 'bh' is not a list of label"),
        (lambda m: m["tasks"][0].update(labels={"b": 0, "h": 1}), "tasks: task 'harmful': labels {'b': 0, 'h': 1} is"),
        (lambda m: m["tasks"][0].update(labels=[0, 1]), "tasks: task 'harmful': labels [0, 1] is not a list of label"),
        (lambda m: m["tasks"][0].update(labels=["no"]), "tasks: task 'harmful' (binary): expected two labels (negat"),
        (lambda m: m["tasks"][0].pop("labels"), "tasks: no 'labels'"),
        (lambda m: m["preprocessing"].update(max_elements=0), "preprocessing: max_elements: expected a whole number"),
        (lambda m: m["preprocessing"].update(max_elements=-1), "preprocessing: max_elements: expected a whole numb"),
        (lambda m: m["preprocessing"].update(max_elements=2.7), "preprocessing: max_elements: expected a whole num"),
        (lambda m: m["preprocessing"].update(max_elements=True), "preprocessing: max_elements: expected a whole nu"),
    ],
)
def test_task_labels_or_a_count_no_save_writes_fail_loading_naming_the_manifest_and_the_field(
    saved, tmp_path: Path, edit: Callable[[dict], object], wrong: str
) -> None:
    copy = edited_model(saved[1], tmp_path / "edited", edit)
    with pytest.raises(ArtifactError, match=f"^{re.escape(str(copy / 'faim.json'))}: {re.escape(wrong)}"):
        faim.load(copy)


@pytest.mark.parametrize(
    ("head", "differs"),
    [
        ({"hidden_dim": 0}, r"missing \['heads.harmful.net.1.bias', .*unexpected \['heads.harmful.net.0.bias'"),
        ({"hidden_dim": 8}, r"size mismatch for heads.harmful.net.0.weight: saved \[\d+, \d+\], the model's \[8, "),
    ],
)
def test_weights_that_do_not_fit_the_recipe_are_named(head: dict, differs: str, saved) -> None:
    _, directory = saved
    recipe = read_recipe(directory).to_dict()
    recipe["model"]["heads"]["harmful"] |= head
    (directory / "recipe.yaml").write_text(Recipe.from_dict(recipe).to_yaml(), encoding="utf-8")
    manifest = json.loads((directory / "faim.json").read_text())
    manifest["files"]["recipe.yaml"] = sha256_file(directory / "recipe.yaml")
    del manifest[SEAL]
    (directory / "faim.json").write_text(json.dumps(manifest, indent=2))
    with pytest.raises(ArtifactError, match=rf"model.safetensors: weights do not fit the recipe \({differs}"):
        faim.load(directory)


@pytest.mark.parametrize("name", ["model.safetensors", "recipe.yaml"])
def test_weights_or_a_recipe_the_listing_does_not_hold_fail_loading_naming_them(
    name: str, saved, tmp_path: Path
) -> None:
    _, directory = saved
    copy = edited_model(directory, tmp_path / "edited", lambda m: m["files"].pop(name))
    (copy / name).write_bytes((copy / name).read_bytes() + b"\n")  # read unchecked before
    wrong = f"{copy / 'faim.json'}: {name!r} is not a file listed under files"
    with pytest.raises(ArtifactError, match=f"^{re.escape(wrong)}$"):
        faim.load(copy)
    if name == "recipe.yaml":
        with pytest.raises(ArtifactError, match=f"^{re.escape(wrong)}$"):
            read_recipe(copy)


def test_missing_file_is_named(saved) -> None:
    _, directory = saved
    (directory / "recipe.yaml").unlink()
    with pytest.raises(ArtifactError, match=r"recipe.yaml: listed in faim.json but missing"):
        faim.load(directory)


def test_not_a_model_directory(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not a faim model"):
        faim.load(tmp_path)


def test_a_training_runs_folder_given_for_a_saved_model_names_the_model_in_it(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "faim.json").write_text("{}", encoding="utf-8")
    run, model = re.escape(str(tmp_path)), re.escape(str(tmp_path / "model"))
    named = f"^{run}: a training run's folder, not a saved model; its model is {model}$"
    with pytest.raises(ArtifactError, match=named):
        faim.load(tmp_path)


def test_a_directory_that_does_not_exist_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=f"^{re.escape(str(tmp_path / 'nope'))}: does not exist$"):
        faim.load(tmp_path / "nope")


@pytest.mark.parametrize(("given", "named"), [(None, "None"), (3, "an int"), (b"model", "a bytes")])
def test_what_is_no_path_given_for_a_saved_model_is_refused_naming_its_type(given: object, named: str) -> None:
    said = f"expected a saved model's folder (a str or a Path), got {named}"
    with pytest.raises(TypeError, match=f"^{re.escape(said)}$"):
        faim.load(given)


def test_an_empty_path_given_for_a_saved_model_is_refused_not_read_as_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    said = "expected a saved model's folder, got an empty path (a variable not set?); name a folder, . for this one"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        faim.load("")


def test_a_file_given_for_a_saved_model_is_named_as_a_file_with_the_folder_to_name(tmp_path: Path) -> None:
    (tmp_path / "faim.json").write_text("{}", encoding="utf-8")
    with pytest.raises(
        ArtifactError, match=f"^{re.escape(str(tmp_path / 'faim.json'))}: a file, not a folder; name the folder holding"
    ):
        faim.load(tmp_path / "faim.json")


def test_an_export_given_for_a_saved_model_is_named_as_one(tmp_path: Path) -> None:
    (tmp_path / "faim-export.json").write_text("{}", encoding="utf-8")
    with pytest.raises(
        ArtifactError,
        match=rf"^{tmp_path}: an export written by faim export, not a saved model; this needs the saved model faim "
        r"train wrote \(with faim.json\)$",
    ):
        faim.load(tmp_path)


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ("{not json", r"faim.json: not a faim model's manifest \(Expecting"),
        ("{}", r"faim.json: .*\(no encoders, files"),
    ],
)
def test_a_manifest_that_is_not_one_is_named(manifest: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "faim.json").write_text(manifest, encoding="utf-8")
    with pytest.raises(ArtifactError, match=message):
        faim.load(tmp_path)


def write_tiny_bert(directory: Path, seed: int = 0) -> None:
    """A one-layer BERT with random weights (drawn from ``seed``) and its tokenizer, as hf_text reads them."""
    from transformers import AutoModel, BertConfig, BertTokenizer

    from faim.encoders.tiny_text import tiny_vocab

    vocab = tiny_vocab() | {word: len(tiny_vocab()) + i for i, word in enumerate(["some", "words"])}
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        AutoModel.from_config(config).save_pretrained(directory)
    BertTokenizer(vocab=vocab).save_pretrained(directory)


def test_hf_text_artifact_carries_config_and_tokenizer(tmp_path: Path, demo_data) -> None:
    source = tmp_path / "bert"
    write_tiny_bert(source)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    folding = {"fold_confusables": True, "fold_leetspeak": True}
    text = {"type": "hf_text", "weights": str(source), "max_length": 16} | folding
    recipe["model"]["encoders"] = {"text": text}
    detector = faim.build(recipe)
    detector.save(str(tmp_path / "model"))
    for path in source.iterdir():
        path.unlink()
    source.rmdir()
    loaded = faim.load(tmp_path / "model")
    posts = [
        {"id": "a", "text": "some words"},
        {"id": "c", "text": "s\u043eme w\u043erds"},
        {"id": "d", "text": "s0me w0rds"},
    ]
    scores = loaded.score(posts)
    assert scores == detector.score(posts)
    assert scores[1]["harmful"] == pytest.approx(scores[0]["harmful"], abs=1e-6)  # the Cyrillic о folds after loading
    assert scores[2]["harmful"] == pytest.approx(scores[0]["harmful"], abs=1e-6)  # and so does the leetspeak
    assert (tmp_path / "model" / "encoders" / "text" / "config.json").is_file()


@pytest.fixture
def saved_bert(tmp_path: Path, demo_data) -> Path:
    """A saved model whose text encoder (hf_text) reads its config and tokenizer from the folder ``encoders/text`` its
    rebuild arguments name, with a copy of that folder beside the model (``elsewhere``) and one inside it, unlisted
    (``unlisted``)."""
    write_tiny_bert(tmp_path / "bert")
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["encoders"] = {"text": {"type": "hf_text", "weights": str(tmp_path / "bert"), "max_length": 16}}
    faim.build(recipe).save(str(tmp_path / "saved"))
    shutil.copytree(tmp_path / "saved" / "encoders" / "text", tmp_path / "elsewhere")
    shutil.copytree(tmp_path / "saved" / "encoders" / "text", tmp_path / "saved" / "unlisted")
    return tmp_path / "saved"


UNLISTED = "is not a file listed under files"


@pytest.mark.parametrize(
    ("weights", "wrong"),
    [
        ("../elsewhere", f"encoders.text.weights '../elsewhere' {UNLISTED}"),
        ("ELSEWHERE", f"encoders.text.weights 'ELSEWHERE' {UNLISTED}"),
        ("unlisted", f"encoders.text.weights 'unlisted': file 'unlisted/config.json' {UNLISTED}"),
        ("unlisted/config.json", f"encoders.text.weights 'unlisted/config.json' {UNLISTED}"),
        ("..\\elsewhere", f"encoders.text.weights '..\\\\elsewhere' {UNLISTED}"),
        ("C:\\elsewhere", f"encoders.text.weights 'C:\\\\elsewhere' {UNLISTED}"),
        ("~/elsewhere", f"encoders.text.weights '~/elsewhere' {UNLISTED}"),
    ],
)
def test_a_path_of_the_rebuild_arguments_that_the_verified_listing_does_not_hold_fails_loading_naming_it(
    saved_bert: Path, tmp_path: Path, weights: str, wrong: str
) -> None:
    weights = weights.replace("ELSEWHERE", str(tmp_path / "elsewhere"))
    wrong = wrong.replace("ELSEWHERE", str(tmp_path / "elsewhere"))
    copy = edited_model(saved_bert, tmp_path / "edited", lambda m: m["encoders"]["text"].update(weights=weights))
    with pytest.raises(ArtifactError, match=f"^{re.escape(str(copy / 'faim.json'))}: {re.escape(wrong)}$"):
        faim.load(copy)


def test_a_file_added_to_a_folder_the_rebuild_arguments_name_fails_loading_naming_it(saved_bert: Path) -> None:
    (saved_bert / "encoders" / "text" / "special_tokens_map.json").write_text("{}", encoding="utf-8")
    wrong = f"encoders.text.weights 'encoders/text': file 'encoders/text/special_tokens_map.json' {UNLISTED}"
    with pytest.raises(ArtifactError, match=re.escape(wrong)):
        faim.load(saved_bert)


def test_hidden_files_a_system_adds_to_a_folder_the_rebuild_arguments_name_are_passed_over(saved_bert: Path) -> None:
    (saved_bert / "encoders" / "text" / ".DS_Store").write_bytes(b"\0")
    (saved_bert / "encoders" / "text" / "._config.json").write_bytes(b"\0")
    assert faim.load(saved_bert).model.encoder_for("text") is not None


@pytest.mark.parametrize("setting", ["IMAGENET1K_V1", "", ".", "org/model"])
def test_a_rebuild_argument_naming_no_path_of_the_model_is_kept_whatever_the_working_directory_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "weights.bin").write_bytes(b"w")
    for name in ("IMAGENET1K_V1", "org/model"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"a file of the working directory")
    monkeypatch.chdir(tmp_path)
    arguments = {"weights": setting, "files": ["weights.bin"]}
    rebuilt = inside(arguments, tmp_path / "model", {"weights.bin": "0" * 64}, "encoders.image")
    assert rebuilt == {"weights": setting, "files": [str(tmp_path / "model" / "weights.bin")]}


def test_a_rebuild_argument_naming_a_folder_of_many_files_writes_the_listings_names_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tokenizer").mkdir()
    listing = {}
    for index in range(200):
        (tmp_path / "tokenizer" / f"piece{index}.json").write_text("{}", encoding="utf-8")
        listing[f"tokenizer\\piece{index}.json"] = "0" * 64  # as a model saved on Windows lists them
    written = []
    portable = file_digests.portable
    monkeypatch.setattr(file_digests, "portable", lambda name: written.append(name) or portable(name))
    assert inside({"weights": "tokenizer"}, tmp_path, listing, "encoders.text") == {
        "weights": str(tmp_path / "tokenizer")
    }
    assert len(written) == len(listing) + 200  # each listed name once, and each file of the folder


def test_a_saved_encoder_keeps_the_cache_identity_of_its_weights_not_of_its_path(tmp_path: Path, demo_data) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["encoders"] = {"text": {"type": "hf_text", "weights": str(tmp_path / "bert"), "freeze": True}}
    identities = []
    for seed in (0, 1):  # other weights at the same paths: the source, then the saved model
        write_tiny_bert(tmp_path / "bert", seed)
        built = faim.build(recipe)
        built.save(str(tmp_path / "model"))
        loaded = faim.load(tmp_path / "model")
        identities.append(part_identity(loaded.model.encoder_for("text"), "text", 4))
        assert identities[-1] == part_identity(built.model.encoder_for("text"), "text", 4)  # reads what it cached
    assert identities[0] != identities[1]


def test_pooled_calibration_round_trips(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"pool_by_image": 0.95}
    detector = faim.build(recipe)
    detector.pooled = Calibration({"harmful": 0.61}, {"harmful": 0.4}, {"harmful": -0.2})
    detector.save(str(tmp_path / "model"))
    loaded = faim.load(tmp_path / "model")
    assert loaded.pooled == detector.pooled
    assert faim.load(saved_without_pooling(demo_data, tmp_path)).pooled is None


def saved_without_pooling(demo_data: dict[str, Path], tmp_path: Path) -> Path:
    faim.build(tiny_recipe(demo_data, tmp_path / "plain")).save(str(tmp_path / "plain_model"))
    return tmp_path / "plain_model"


def test_a_pooled_calibrations_correction_weight_round_trips(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"pool_by_image": 0.95, "crowd_corrections": "topic"}
    detector = faim.build(recipe)
    detector.pooled = Calibration({"harmful": 0.6}, {"harmful": 0.4}, {"harmful": 0.1}, {}, {"harmful": 0.8})
    detector.save(str(tmp_path / "model"))
    manifest = json.loads((tmp_path / "model" / "faim.json").read_text())
    (task,) = manifest["tasks"]
    assert task["pooled"]["correction_weight"] == 0.8 and "correction_weight" not in task
    assert faim.load(tmp_path / "model").pooled == detector.pooled


def test_an_untrained_detector_built_from_a_recipe_saves_that_recipe(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    faim.build(recipe).save(tmp_path / "model")
    assert read_recipe(tmp_path / "model").to_dict() == as_recipe(recipe).to_dict()  # data and eval included


def test_a_trained_detector_is_in_eval_mode_and_saved_again_keeps_the_recipe_it_was_trained_from(
    demo_data, tmp_path: Path
) -> None:
    trained = faim.train(tiny_recipe(demo_data, tmp_path / "run", max_epochs=1))
    assert not any(module.training for module in trained.model.modules())  # as a loaded one
    trained.save(tmp_path / "copy")
    assert read_recipe(tmp_path / "copy").to_dict() == read_recipe(tmp_path / "run" / "model").to_dict()


@pytest.fixture
def scaled_head() -> Iterator[str]:
    """The name of a head registered as plug-ins register theirs, whose constructor reads the value of a tensor it
    makes; unregistered after the test."""

    @faim.register_head("test_scaled")
    class ScaledHead(BinaryHead):
        def __init__(self, input_dim: int, scale: float = 2.0) -> None:
            super().__init__(input_dim)
            self.register_buffer("scale", torch.tensor(scale))
            if float(self.scale) <= 0:
                raise ValueError("scale must be positive")

    yield "test_scaled"
    registry.HEADS.pop("test_scaled")


@pytest.mark.parametrize("composed_in_code", [False, True])
def test_a_plugin_whose_constructor_reads_a_tensors_value_is_saved_and_loaded(
    scaled_head: str, composed_in_code: bool, tmp_path: Path, write_recipe
) -> None:
    section = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}},
        "fusion": {"type": "concat"},
        "heads": {"harmful": {"type": scaled_head, "scale": 3.0, "labels": ["no", "yes"]}},
    }
    detector = faim.build({"model": section})
    if composed_in_code:
        detector.recipe = None
    state = torch.random.get_rng_state()
    detector.save(tmp_path / "model")
    assert torch.equal(torch.random.get_rng_state(), state)  # later random draws are as they were
    assert float(faim.load(tmp_path / "model").model.heads["harmful"].scale) == 3.0
    section["heads"]["harmful"]["scale"] = -1.0  # what is wrong with a recipe is said still, naming it
    path = write_recipe({"model": section}, "scaled.yaml")
    for given, named in (({"model": section}, "<dict>"), (path, path)):
        with pytest.raises(RecipeError, match=rf"^{named}: model.heads.harmful: scale must be positive$") as refused:
            detector.save(tmp_path / "model", given)
        assert str(refused.value.__cause__) == "scale must be positive"


def test_a_save_refused_for_an_encoder_the_model_lacks_that_loads_weights_as_it_is_built_says_nothing_else(
    tmp_path: Path,
) -> None:
    from faim.encoders.tiny_text import TinyTextEncoder

    @faim.register_encoder("test_loading_text")
    class LoadingText(TinyTextEncoder):
        def __init__(self, dim: int = 8) -> None:
            super().__init__(dim=dim)
            self.load_state_dict(
                {name: torch.ones(value.shape, device="cpu") for name, value in self.state_dict().items()}
            )

    text = {"type": "tiny_text", "dim": 8}
    section = {
        "encoders": {"text": text},
        "fusion": {"type": "concat"},
        "heads": {"harmful": {"type": "binary", "labels": ["no", "yes"]}},
    }
    detector = faim.build({"model": section})
    recipe = {"model": section | {"encoders": {"text": text, "comments": {"type": "test_loading_text"}}}}
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match=r"model.encoders.comments \(encoders.comments.* in the recipe's"):
                detector.save(tmp_path / "model", recipe)
    finally:
        registry.ENCODERS.pop("test_loading_text")
    assert [str(warning.message) for warning in said] == []
    assert not (tmp_path / "model").exists()


def test_a_save_builds_on_the_cpu_only_the_component_that_cannot_be_built_on_the_meta_device(
    scaled_head: str, tmp_path: Path
) -> None:
    from faim.encoders.tiny_text import TinyTextEncoder

    devices: list[str] = []

    @faim.register_encoder("test_counted_text")
    class CountedText(TinyTextEncoder):
        def __init__(self, dim: int = 8) -> None:
            super().__init__(dim=dim)
            devices.append(next(self.parameters()).device.type)

    section = {
        "encoders": {"text": {"type": "test_counted_text"}},
        "fusion": {"type": "concat"},
        "heads": {"harmful": {"type": scaled_head, "labels": ["no", "yes"]}},
    }
    try:
        detector = faim.build({"model": section})
        devices.clear()
        detector.save(tmp_path / "model")
        assert devices == ["meta"]  # the head alone, whose constructor reads its tensor, is built on the CPU
        assert float(faim.load(tmp_path / "model").model.heads["harmful"].scale) == 2.0
    finally:
        registry.ENCODERS.pop("test_counted_text")


def test_a_model_saved_with_an_argument_a_check_added_since_refuses_loads_with_a_warning_and_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class CountsHead(BinaryHead):
        def __init__(self, input_dim: int, counts: Mapping[str, int] | None = None, correction: bool = False) -> None:
            super().__init__(input_dim, correction=correction)
            self.counts = counts

    faim.register_head("test_counts")(CountsHead)
    head = {"type": "test_counts", "labels": ["no", "yes"], "counts": {"a": "x"}}
    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    recipe = {"model": section | {"heads": {"harmful": head}}}
    try:
        with pytest.raises(RecipeError, match=r"model.heads.harmful.counts: expected Mapping\[str, int\] \| None"):
            faim.build(recipe)
        with monkeypatch.context() as patched:  # saved as faim saved it before the check
            patched.setattr(validate, "type_matches", lambda value, annotation: True)
            faim.build(recipe).save(tmp_path / "model")
        said = r"model.heads.harmful.counts: expected Mapping\[str, int\] \| None, got \{'a': 'x'\}; built with"
        with pytest.warns(registry.SavedModelWarning, match=f"{tmp_path / 'model'}: {said}"):
            loaded = faim.load(tmp_path / "model")
        assert loaded.model.heads["harmful"].counts == {"a": "x"}
        assert [row["id"] for row in loaded.score([{"id": "1", "text": "some words"}])] == ["1"]
        with pytest.warns(registry.SavedModelWarning, match=said):
            assert read_recipe(tmp_path / "model").model["heads"]["harmful"]["counts"] == {"a": "x"}
        loaded.model.heads["harmful"].build_correction()  # as faim calibrate --head corrects it, then saves it
        loaded.save(tmp_path / "corrected")
        with pytest.warns(registry.SavedModelWarning, match=f"{tmp_path / 'corrected'}: {said}"):
            assert faim.load(tmp_path / "corrected").recipe.model["heads"]["harmful"]["correction"] is True
    finally:
        registry.HEADS.pop("test_counts")


def test_a_model_saved_with_a_plug_in_not_registered_where_it_is_loaded_says_to_import_or_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from faim.encoders.tiny_text import TinyTextEncoder

    monkeypatch.setattr(registry, "ENCODERS", dict(registry.ENCODERS))
    monkeypatch.setitem(registry.REGISTRIES, "encoder", registry.ENCODERS)

    @faim.register_encoder("saved_probe_text")
    class ProbeText(TinyTextEncoder):
        pass

    section = {
        "encoders": {"text": {"type": "saved_probe_text", "dim": 8}},
        "fusion": {"type": "concat"},
        "heads": {"hate": {"type": "binary", "labels": ["no", "yes"]}},
    }
    faim.build({"model": section}).save(tmp_path / "model")
    del registry.ENCODERS["saved_probe_text"]  # as in a process where the module registering it was not imported
    message = (
        r"model.encoders.text.type: unknown encoder 'saved_probe_text'; valid: .*tiny_text.*; the model was saved "
        r"with a component registered under that name: import the module registering it "
        r"\(faim.register_encoder\) before loading the model, or install the package shipping it as a faim.plugins "
        r"plug-in$"
    )
    with pytest.raises(RecipeError, match=message):
        faim.load(tmp_path / "model")
    with pytest.raises(RecipeError, match=r"unknown encoder 'saved_probe_text'; valid: [^;]*$"):
        faim.build({"model": section})  # a new recipe's unknown type may be a slip of the pen
