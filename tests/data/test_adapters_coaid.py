"""The ``coaid`` adapter on generated snapshot folders in CoAID's layout, and on the real set when present."""

from __future__ import annotations

import csv
import inspect
import re
from collections import Counter
from pathlib import Path

import pytest

from faim.data.coaid import LABELS, CoaidSource
from faim.data.sources import check_split
from faim.registry import SOURCES

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "coaid"
NEWS = ["", "type", "fact_check_url", "news_url", "title", "content"]
CLAIM = ["", "fact_check_url", "news_url", "title"]


def write(path: Path, header: list[str], titles: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for index, title in enumerate(titles):
            cells = {"": str(index), "type": "post" if "Fake" in path.name else "article", "title": title}
            writer.writerow([cells.get(column, "x") for column in header])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write(tmp_path / "05-01-2020" / "NewsFakeCOVID-19.csv", NEWS, ["Bleach cures it", "Repeated  news", "5G, towers"])
    write(tmp_path / "05-01-2020" / "NewsRealCOVID-19.csv", NEWS, ['"Wash your hands"', "Later in validation"])
    write(tmp_path / "05-01-2020" / "ClaimFakeCOVID-19.csv", CLAIM, ["Garlic protects"])
    write(tmp_path / "07-01-2020" / "NewsFakeCOVID-19.csv", NEWS, ["repeated news"])
    write(tmp_path / "07-01-2020" / "NewsRealCOVID-19.csv", NEWS, ["Masks work"])
    write(tmp_path / "07-01-2020" / "ClaimRealCOVID-19.csv", CLAIM, ["Masks work"])
    write(tmp_path / "11-01-2020" / "NewsFakeCOVID-19.csv", NEWS, ["Vaccine chips"])
    write(tmp_path / "11-01-2020" / "NewsRealCOVID-19.csv", NEWS, ["later in validation", "Winter wave", "Winter wave"])
    (tmp_path / "notes").mkdir()
    return tmp_path


def test_registered_with_recipe_arguments():
    assert SOURCES["coaid"] is CoaidSource
    assert list(inspect.signature(CoaidSource).parameters) == [
        "root",
        "task",
        "validation_snapshot",
        "include_claims",
    ]
    assert LABELS == ["real", "fake"]


def test_temporal_split_deduplicated_and_disjoint(root):
    source = CoaidSource(str(root))
    assert source.snapshots() == ["05-01-2020", "07-01-2020", "11-01-2020"]
    train, validation = source.posts("train"), source.posts("validation")
    assert [(p.text, p.labels["fake"]) for p in validation] == [
        ("Vaccine chips", 1),
        ("later in validation", 0),
        ("Winter wave", 0),
    ]
    assert [(p.id, p.text, p.labels["fake"]) for p in train] == [
        ("05-01-2020/NewsFake/0", "Bleach cures it", 1),
        ("05-01-2020/NewsFake/1", "Repeated  news", 1),
        ("05-01-2020/NewsFake/2", "5G, towers", 1),
        ("05-01-2020/NewsReal/0", "Wash your hands", 0),
        ("07-01-2020/NewsReal/0", "Masks work", 0),
    ]
    assert train[3].meta == {"snapshot": "05-01-2020", "kind": "news", "type": "article"}
    assert train[3].origin == f"{root / '05-01-2020' / 'NewsRealCOVID-19.csv'}:2"


def test_claims_and_another_validation_snapshot(root):
    source = CoaidSource(str(root), validation_snapshot="07-01-2020", include_claims=True, task="misinfo")
    validation = source.posts("validation")
    assert [(p.text, p.meta["kind"], p.labels) for p in validation] == [
        ("repeated news", "news", {"misinfo": 1}),
        ("Masks work", "news", {"misinfo": 0}),
    ]
    train = source.posts("train")
    assert "Garlic protects" in [p.text for p in train] and "Repeated  news" not in [p.text for p in train]
    assert source.describe("train") == f"{root} (train: 05-01-2020, 11-01-2020)"
    assert source.fingerprint("train") != CoaidSource(str(root)).fingerprint("train")


def test_iter_posts_reads_a_file_or_a_snapshot_without_deduplication(root):
    source = CoaidSource(str(root))
    assert len(list(source.iter_posts(root / "11-01-2020"))) == 4
    assert [p.meta["kind"] for p in source.iter_posts(root / "05-01-2020" / "ClaimFakeCOVID-19.csv")] == ["claim"]


def test_errors_name_the_file_and_the_choices(root, tmp_path):
    with pytest.raises(ValueError, match="^data.validation_snapshot: '11-01-2021' not found.*snapshots: 05-01-2020"):
        CoaidSource(str(root), validation_snapshot="11-01-2021").posts("train")
    expected = (
        f"data.root: {tmp_path / 'nowhere'} (resolved to {tmp_path / 'nowhere'}) holds no MM-DD-YYYY folder holding "
        "NewsFakeCOVID-19.csv, NewsRealCOVID-19.csv; root must be the CoAID folder holding its dated snapshot folders"
    )
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(FileNotFoundError, match=f"^{re.escape(expected)}"):
            read(CoaidSource(str(tmp_path / "nowhere")), "validation")
    with pytest.raises(FileNotFoundError, match="NewsFakeCOVID-19.csv does not exist"):
        list(CoaidSource(str(root)).iter_posts(root / "09-01-2020" / "NewsFakeCOVID-19.csv"))
    with pytest.raises(ValueError, match="cannot tell fake from real for .*other.csv"):
        list(CoaidSource(str(root)).iter_posts(root / "other.csv"))
    (root / "11-01-2020" / "NewsFakeCOVID-19.csv").write_text("id,headline\n1,x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="NewsFakeCOVID-19.csv: missing 1 column: title; found: id, headline"):
        CoaidSource(str(root)).posts("validation")


@pytest.mark.real_data
@pytest.mark.skipif(not REAL.is_dir(), reason=f"CoAID data not found at {REAL}")
def test_real_coaid():
    source = CoaidSource(str(REAL))
    assert source.snapshots() == ["05-01-2020", "07-01-2020", "09-01-2020", "11-01-2020"]
    train, validation = source.posts("train"), source.posts("validation")
    assert Counter(p.labels["fake"] for p in train) == {0: 3369, 1: 885}
    assert Counter(p.labels["fake"] for p in validation) == {0: 920, 1: 31}
    assert not {p.text.casefold() for p in train} & {p.text.casefold() for p in validation}


def test_a_relative_root_not_there_says_a_recipes_data_paths_are_read_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a recipe read from another folder, whose root names a folder beside it
    from_recipe = "; a recipe's data paths are read from the working directory, not its folder"
    with pytest.raises(FileNotFoundError, match=f"^data.root: coaid \\(resolved to .*{re.escape(from_recipe)}$"):
        check_split(CoaidSource("coaid"), "train")
