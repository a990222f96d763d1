"""The ``ethos`` adapter on a generated ``Ethos_Dataset_Binary.csv`` and on the real file when present."""

from __future__ import annotations

import inspect
from collections import Counter
from pathlib import Path

import pytest

from faim.data.ethos import LABELS, EthosSource
from faim.registry import SOURCES

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ethos"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    lines = [
        "comment;isHate",
        "plain comment;1.0",
        '"has; a semicolon and ""quotes""";0.5',
        "just below;0.49",
        *(f"filler {i};{i % 2}.0" for i in range(37)),
    ]
    (tmp_path / "Ethos_Dataset_Binary.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_registered_with_recipe_arguments():
    assert SOURCES["ethos"] is EthosSource
    assert list(inspect.signature(EthosSource).parameters) == ["root", "validation_fraction", "seed", "task"]
    assert LABELS == ["not-hate", "hate"]


def test_semicolons_quotes_and_threshold(root):
    posts = list(EthosSource(str(root)).iter_posts(root / "Ethos_Dataset_Binary.csv"))
    assert [(p.id, p.text, p.labels["hate"], p.meta["hate_score"]) for p in posts[:3]] == [
        ("0", "plain comment", 1, 1.0),
        ("1", 'has; a semicolon and "quotes"', 1, 0.5),
        ("2", "just below", 0, 0.49),
    ]
    assert posts[2].origin == f"{root / 'Ethos_Dataset_Binary.csv'}:4" and len(posts) == 40


def test_split_is_stratified_disjoint_and_deterministic(root):
    source = EthosSource(str(root), validation_fraction=0.25, task="hs")
    train, validation = source.posts("train"), source.posts("validation")
    assert sorted(p.id for p in train + validation) == sorted(str(i) for i in range(40))
    assert not {p.id for p in train} & {p.id for p in validation}
    assert Counter(p.labels["hs"] for p in validation) == {0: 5, 1: 5}
    assert [p.id for p in EthosSource(str(root), validation_fraction=0.25).posts("validation")] == [
        p.id for p in validation
    ]
    assert source.fingerprint("train") != source.fingerprint("validation")


def test_errors_name_the_file_row_and_value(root):
    file = root / "Ethos_Dataset_Binary.csv"
    file.write_text("comment;isHate\nok;0.0\nbad;yes\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"Ethos_Dataset_Binary.csv:3: unknown label 'yes'"):
        EthosSource(str(root)).posts("train")
    file.write_text("comment;isHate\nbad;1.5\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"Ethos_Dataset_Binary.csv:2: unknown label '1.5'"):
        EthosSource(str(root)).posts("train")
    file.write_text("comment,isHate\nbad,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="missing 2 columns: comment, isHate;"):
        EthosSource(str(root)).posts("train")
    file.write_bytes("comment;isHate\nlatin-1 caf\xe9;1\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"Binary\.csv:2: column .comment.: not UTF-8 text \(byte 12 of the cell\)"):
        EthosSource(str(root)).posts("train")


@pytest.mark.real_data
@pytest.mark.skipif(not REAL.is_dir(), reason=f"ETHOS data not found at {REAL}")
def test_real_ethos():
    source = EthosSource(str(REAL))
    train, validation = source.posts("train"), source.posts("validation")
    assert Counter(p.labels["hate"] for p in train) == {0: 508, 1: 390}
    assert Counter(p.labels["hate"] for p in validation) == {0: 57, 1: 43}
