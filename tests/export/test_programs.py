"""``faim export --format pt2``: torch.export programs whose scores equal the eager model's within 1e-4 for every
element kind and head, read back without unpickling anything; an archive holding an entry that would be unpickled
is refused, naming it, before torch reads it."""

from __future__ import annotations

import json
import pickle
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import edited_model, export_posts
from test_model_export import flat_scores, picture_and_meta_detector

import faim.runtime
from faim import Detector
from faim.cli.main import main
from faim.export.model import export_model
from faim.export.programs import load_export, load_program
from faim.fusion import InteractionFusion
from faim.runtime import ExportError

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def programs(exported: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The ``exported`` fixture's saved model and its pt2 export: ``(saved model, export)``."""
    model_dir, _ = exported
    out = tmp_path_factory.mktemp("programs") / "export"
    assert main(["export", str(model_dir), "-o", str(out), "--format", "pt2"]) == 0
    return model_dir, out


def test_programs_score_as_the_model_does_for_every_kind_and_head(programs: tuple[Path, Path]) -> None:
    model_dir, export_dir = programs
    detector, loaded = Detector.load(model_dir), load_export(export_dir)
    eager, served = detector.score(export_posts(), batch_size=2), loaded.score(export_posts(), batch_size=2)
    assert [row["id"] for row in served] == [row["id"] for row in eager]
    assert [set(row) for row in served] == [set(row) for row in eager]
    assert np.abs(flat_scores(served) - flat_scores(eager)).max() <= TOLERANCE
    assert np.abs(loaded.embed(export_posts()) - detector.embed(export_posts())).max() <= TOLERANCE


def test_the_pt2_export_lists_its_programs_and_the_onnx_runtime_names_the_loader(programs: tuple[Path, Path]) -> None:
    _, export_dir = programs
    manifest = json.loads((export_dir / "faim-export.json").read_text())
    assert manifest["graph_format"] == "pt2" and manifest["fusion"]["graph"] == "fusion.pt2"
    assert {"encoders/text/encoder.pt2", "encoders/image/encoder.pt2", "fusion.pt2"} <= set(manifest["files"])
    assert not list(export_dir.rglob("*.onnx"))
    with pytest.raises(ExportError, match="graphs are pt2, not onnx.*faim.export.programs.load_export"):
        faim.runtime.load(export_dir)
    fusion_weights = load_program(export_dir / "fusion.pt2").state_dict
    assert fusion_weights and all(name.startswith(("fusion.", "heads.")) for name in fusion_weights)


def test_a_program_the_manifest_names_outside_its_verified_files_is_refused(
    programs: tuple[Path, Path], tmp_path: Path
) -> None:
    shutil.copytree(programs[1], tmp_path / "elsewhere")
    copy = edited_model(programs[1], tmp_path / "export", lambda m: m["fusion"].update(graph="../elsewhere/fusion.pt2"))
    refusal = "faim-export.json: fusion: graph '../elsewhere/fusion.pt2' is not a file listed under files"
    with pytest.raises(ExportError, match=re.escape(refusal)):
        load_export(copy)


def test_an_interaction_fusion_exports_as_a_program(tmp_path: Path) -> None:
    detector = picture_and_meta_detector(InteractionFusion, dim=8, text="meta", image="image")
    loaded = load_export(export_model(detector, tmp_path / "export", "pt2"))
    posts = detector.readable(export_posts())[0]
    gap = np.abs(flat_scores(loaded.score(posts)) - flat_scores(detector.score(posts)))
    assert gap.max() <= TOLERANCE


class Planted:
    """Unpickling this writes a file: the mark that something was unpickled."""

    def __init__(self, mark: Path) -> None:
        self.mark = mark

    def __reduce__(self):
        return (Path.write_text, (self.mark, "unpickled"))


def rewritten(source: Path, target: Path, change) -> Path:
    """A copy of the archive ``source`` with ``change(name, data) -> data`` applied to every entry."""
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w") as out:
        for info in archive.infolist():
            out.writestr(info, change(info.filename, archive.read(info)))
    return target


def test_an_archive_with_pickled_example_inputs_is_refused_before_anything_is_unpickled(
    programs: tuple[Path, Path], tmp_path: Path
) -> None:
    _, export_dir = programs
    mark = tmp_path / "mark"
    payload = pickle.dumps(Planted(mark))
    archive = rewritten(
        export_dir / "fusion.pt2",
        tmp_path / "fusion.pt2",
        lambda name, data: payload if name.endswith("data/sample_inputs/model.pt") else data,
    )
    with pytest.raises(ExportError, match="'data/sample_inputs/model.pt' holds pickled example inputs"):
        load_program(archive)
    assert not mark.exists()


def test_an_archive_storing_a_weight_as_a_pickle_is_refused(programs: tuple[Path, Path], tmp_path: Path) -> None:
    _, export_dir = programs

    def pickled_weights(name: str, data: bytes) -> bytes:
        if not name.endswith("model_weights_config.json"):
            return data
        table = json.loads(data)
        first = next(iter(table["config"]))
        table["config"][first]["use_pickle"] = True
        return json.dumps(table).encode()

    archive = rewritten(export_dir / "fusion.pt2", tmp_path / "fusion.pt2", pickled_weights)
    with pytest.raises(ExportError, match="model_weights_config.json stores .* as a pickled object"):
        load_program(archive)


NOT_PAYLOADS = "is not a table of payloads (an object whose config maps names to objects)"


@pytest.mark.parametrize(
    ("content", "wrong"),
    [
        (b"{not json", "is not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        (b"[1]", NOT_PAYLOADS),
        (b'{"config": [1]}', NOT_PAYLOADS),
        (b'{"config": {"weight": "weight_0"}}', NOT_PAYLOADS),
    ],
)
def test_a_payload_table_that_is_not_one_is_refused_naming_the_archive_and_the_table(
    programs: tuple[Path, Path], tmp_path: Path, content: bytes, wrong: str
) -> None:
    table = "data/weights/model_weights_config.json"
    source, target = programs[1] / "fusion.pt2", tmp_path / "fusion.pt2"
    archive = rewritten(source, target, lambda name, data: content if name.endswith(table) else data)
    with pytest.raises(ExportError, match=f"^{re.escape(f'{archive}: {table} {wrong}')}$"):
        load_program(archive)


def test_an_archive_with_an_entry_faim_does_not_write_is_refused(programs: tuple[Path, Path], tmp_path: Path) -> None:
    _, export_dir = programs
    archive = tmp_path / "fusion.pt2"
    shutil.copy(export_dir / "fusion.pt2", archive)
    with zipfile.ZipFile(archive, "a") as out:
        root = out.namelist()[0].split("/", 1)[0]
        out.writestr(f"{root}/data/constants/custom_obj_0", b"\x80\x04N.")
    with pytest.raises(ExportError, match="entry 'data/constants/custom_obj_0' is not one faim writes"):
        load_program(archive)


def test_int8_is_refused_for_programs(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "int8"
    assert main(["export", str(tiny_model_dir), "-o", str(out), "--format", "pt2", "--quantize", "int8"]) == 2
    assert "--quantize quantizes ONNX graphs; it cannot be used with --format pt2" in capsys.readouterr().err
    assert not out.exists()
