"""An export's manifest that is not one is refused naming the file and what is wrong with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from faim.runtime.bundle import ExportError, check_graph_format, read_bundle


@pytest.mark.parametrize(
    ("content", "wrong"),
    [
        ("{not json", r"not a faim export's manifest \(Expecting property name"),
        ("[1]", r"not a faim export's manifest \(not a JSON object\)"),
        ('{"format": 1, "tasks": []}', r"not a faim export's manifest \(no encoders, files, fusion, kinds, max_"),
        ('{"format": 7}', r"export format 7 is not supported \(expected 1\)"),
        (
            '{"format": 1, "files": 3, "max_elements": 1, "kinds": [], "encoders": {}, "fusion": {}, "tasks": []}',
            r"files: expected a mapping of file name to sha256, got an int$",
        ),
    ],
)
def test_a_manifest_that_is_not_one_is_named_with_what_is_wrong(tmp_path: Path, content: str, wrong: str) -> None:
    (tmp_path / "faim-export.json").write_text(content, encoding="utf-8")
    with pytest.raises(ExportError, match=f"^{tmp_path / 'faim-export.json'}: {wrong}"):
        read_bundle(tmp_path)


def test_a_directory_that_does_not_exist_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=f"^{tmp_path / 'nope'}: does not exist$"):
        read_bundle(tmp_path / "nope")


def test_a_training_runs_folder_given_as_the_export_is_named_with_its_model(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "faim.json").write_text("{}", encoding="utf-8")
    model = tmp_path / "model"
    named = (
        f"{tmp_path}: a training run's folder, not an export; export its model with faim export {model} -o DIR "
        f"(faim score --runtime onnx scores {model} as it is)"
    )
    with pytest.raises(ExportError, match=f"^{re.escape(named)}$"):
        read_bundle(tmp_path)


def test_a_file_given_as_the_export_is_named_as_a_file_with_the_folder_to_name(tmp_path: Path) -> None:
    for name in ("faim-export.json", "faim.json"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
        with pytest.raises(ExportError, match=rf"^{tmp_path / name}: a file, not a folder; name the folder "):
            read_bundle(tmp_path / name)
    (tmp_path / "fusion.onnx").write_bytes(b"")
    with pytest.raises(ExportError, match=rf"^{tmp_path / 'fusion.onnx'}: a file, not a folder$"):
        read_bundle(tmp_path / "fusion.onnx")


@pytest.mark.parametrize(
    ("found", "expected", "loader"),
    [("onnx", "pt2", "faim.runtime.load"), ("pt2", "onnx", "faim.export.programs.load_export")],
)
def test_an_export_of_other_graphs_is_refused_naming_what_loads_it(
    tmp_path: Path, found: str, expected: str, loader: str
) -> None:
    said = rf"^{tmp_path}: its graphs are {found}, not {expected} \(load it with {loader}"
    with pytest.raises(ExportError, match=said):
        check_graph_format(tmp_path, {"graph_format": found}, expected)
    with pytest.raises(ExportError, match=rf"^{tmp_path}: its graphs are \[1\], not {expected}$"):
        check_graph_format(tmp_path, {"graph_format": [1]}, expected)  # no export writes: nothing loads it
