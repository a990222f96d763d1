"""The sha256 listing of a model's files: checked on load, and naming only files inside the model's directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from faim.file_digests import check_digests, file_digests, file_finder, listed_file, sealed
from faim.weights import sha256_file


@pytest.mark.parametrize("name", ["../elsewhere/weights.bin", "ELSEWHERE", "inner/../../elsewhere/weights.bin"])
def test_a_listed_name_outside_the_directory_is_refused_before_any_file_is_read(name: str, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "weights.bin").write_bytes(b"weights")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "inner").mkdir()
    name = name.replace("ELSEWHERE", str(tmp_path / "elsewhere" / "weights.bin"))
    manifest = sealed({"files": {name: sha256_file(tmp_path / "elsewhere" / "weights.bin")}})
    wrong = f"{tmp_path / 'model' / 'faim.json'}: files: {name!r} is not a path inside {tmp_path / 'model'}"
    with pytest.raises(ValueError, match=f"^{re.escape(wrong)}$"):
        check_digests(tmp_path / "model", manifest, "faim.json", ValueError)


def test_a_listing_of_the_directorys_own_files_passes(tmp_path: Path) -> None:
    (tmp_path / "encoders").mkdir()
    (tmp_path / "encoders" / "config.json").write_text("{}")
    check_digests(tmp_path, sealed({"files": file_digests(tmp_path)}), "faim.json", ValueError)


@pytest.mark.parametrize("name", ["encoders/other.json", "../config.json", "/etc/hosts", ["encoders/config.json"]])
def test_a_name_the_listing_does_not_hold_inside_the_directory_is_no_listed_file(name: object, tmp_path: Path) -> None:
    listing = {"encoders/config.json": "0" * 64, "../config.json": "0" * 64}
    with pytest.raises(ValueError, match=re.escape(f"tokenizer {name!r} is not a file listed under")):
        listed_file(tmp_path, listing, "tokenizer", name)
    assert listed_file(tmp_path, listing, "tokenizer", "encoders/config.json") == tmp_path / "encoders/config.json"


def test_a_file_no_entry_names_is_refused_by_its_name_alone(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^'model.safetensors' is not a file listed under files$"):
        listed_file(tmp_path, {"recipe.yaml": "0" * 64}, None, "model.safetensors")


OUTSIDE = ["../x.onnx", "/x.onnx", "..\\x.onnx", "a\\..\\..\\x.onnx", "C:\\x.onnx", "C:x.onnx", "//h/s/x", "\\x.onnx"]
"""Names of files outside a model's directory, or that Windows reads so (a backslash between parts, a drive)."""


@pytest.mark.parametrize("name", OUTSIDE)
def test_a_file_named_outside_the_directory_on_any_system_is_refused_though_listed(name: str) -> None:
    with pytest.raises(ValueError, match=r"^graph .* is not a file listed under files$"):
        listed_file(Path("export"), {name: "0" * 64}, "graph", name)


def test_a_listed_file_inside_the_directory_is_found_there() -> None:
    name = "encoders/text/model.onnx"
    assert listed_file(Path("export"), {name: "0" * 64}, "graph", name) == Path("export") / name


def test_a_file_listed_with_backslashes_between_its_parts_is_read_where_windows_reads_it(tmp_path: Path) -> None:
    (tmp_path / "encoders" / "text").mkdir(parents=True)
    (tmp_path / "encoders" / "text" / "vocab.txt").write_text("a", encoding="utf-8")
    name = "encoders\\text\\vocab.txt"
    manifest = {"files": {name: sha256_file(tmp_path / "encoders" / "text" / "vocab.txt")}}
    check_digests(tmp_path, manifest, "faim.json", ValueError)
    assert listed_file(tmp_path, manifest["files"], "vocabulary", name) == tmp_path / "encoders" / "text" / "vocab.txt"
    assert listed_file(tmp_path, manifest["files"], "vocabulary", "encoders/text/vocab.txt") == listed_file(
        tmp_path, manifest["files"], "vocabulary", name
    )


def test_a_finder_finds_each_listed_file_as_listed_file_does_and_refuses_the_others_alike(tmp_path: Path) -> None:
    listing = {"encoders\\text\\vocab.txt": "0" * 64, "../x.onnx": "0" * 64}
    find = file_finder(tmp_path, listing)
    assert find("vocabulary", "encoders/text/vocab.txt") == listed_file(
        tmp_path, listing, "vocabulary", "encoders/text/vocab.txt"
    )
    for name in ("../x.onnx", "other.txt"):
        with pytest.raises(ValueError, match=re.escape(f"graph {name!r} is not a file listed under files")):
            find("graph", name)
