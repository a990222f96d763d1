"""The ``vmu`` adapter on a generated MediaEval 2016 folder (posts.txt + image tree), and on the real set."""

from __future__ import annotations

import inspect
import logging
import re
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from faim.data import native, vmu
from faim.data.images import load_image
from faim.data.sources import check_split
from faim.data.vmu import IMAGES, LABELS, VALIDATION_EVENTS, VmuSource
from faim.registry import SOURCES, build_source_spec

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mediaeval2016_vmu"
HEADER = ["post_id", "post_text", "user_id", "image_id(s)", "username", "timestamp", "label"]


def post(ident: str, text: str, images: str, label: str) -> list[str]:
    return [ident, text, "42", images, f"user{ident}", "Wed Apr 17 18:57:37 +0000 2013", label]


def write_posts(root: Path, rows: list[list[str]]) -> None:
    lines = ["\t".join(HEADER), *("\t".join(row) for row in rows)]
    (root / "posts.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    images = tmp_path / IMAGES
    for relative in ("Storm/fakes/storm_fake_01.jpg", "Storm/reals/storm_real_01.png", "Quake/quake_01.jpg"):
        (images / relative).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (4, 4), "red").save(images / relative)
    (images / "Boy").mkdir()
    (images / "Boy" / "boy_video.txt").write_text("id\turl\nboyvideo_1\thttps://example.org/v", encoding="utf-8")
    rows = [
        post("1", 'Look \\"shark\\"\\nin street \\o/', "storm_fake_01,storm_fake_02", "fake"),
        post("2", '"unbalanced quote', "storm_real_01", "real"),
        post("3", "gone", "storm_real_09", "real"),
        post("4", "quake pic", "quake_01", "real"),
        post("5", "quake hoax", "quake_02", "fake"),
        post("6", "video", "boyvideo_1", "fake"),
    ]
    write_posts(tmp_path, rows)
    return tmp_path


def test_registered_with_recipe_arguments():
    assert SOURCES["vmu"] is VmuSource
    assert list(inspect.signature(VmuSource).parameters) == ["root", "task", "validation_events", "require_image"]
    assert LABELS == ["real", "fake"] and len(VALIDATION_EVENTS) == 6


def test_posts_images_events_and_text(root):
    posts = list(VmuSource(str(root)).iter_posts(root / "posts.txt"))
    assert [(p.id, p.images, p.labels["fake"], p.meta["event"]) for p in posts] == [
        ("1", ["Storm/fakes/storm_fake_01.jpg"], 1, "Storm"),
        ("2", ["Storm/reals/storm_real_01.png"], 0, "Storm"),
        ("3", [], 0, "Storm"),
        ("4", ["Quake/quake_01.jpg"], 0, "Quake"),
        ("5", [], 1, "Quake"),
        ("6", [], 1, "Boy"),
    ]
    assert posts[0].text == 'Look "shark"\nin street \\o/' and posts[1].text == '"unbalanced quote'
    assert posts[0].meta == {"event": "Storm", "user": "user1"} and posts[0].origin == f"{root / 'posts.txt'}:2"
    assert posts[0].image_root == (root / IMAGES).absolute()
    assert load_image(posts[1].images[0], posts[1].image_root).size == (4, 4)


def test_split_by_event(root):
    source = VmuSource(str(root), validation_events=["Quake"], task="fake_news")
    assert [p.id for p in source.posts("train")] == ["1", "2", "3", "6"]
    assert [(p.id, p.labels) for p in source.posts("validation")] == [("4", {"fake_news": 0}), ("5", {"fake_news": 1})]
    assert "all events but Quake" in source.describe("train")
    assert source.fingerprint("train") != source.fingerprint("validation")


def test_require_image_drops_and_counts(root, caplog):
    source = VmuSource(str(root), validation_events=["Quake", "Boy"], require_image=True)
    with caplog.at_level(logging.WARNING, logger="faim.data.vmu"):
        assert [p.id for p in source.posts("train")] == ["1", "2"]
        assert [p.id for p in source.posts("validation")] == ["4"]
    assert source.dropped == {"train": 1, "validation": 2}
    assert "validation: dropped 2 of 3 posts without a local image" in caplog.text


def test_errors_name_the_file_row_and_value(root, tmp_path):
    with pytest.raises(ValueError, match=r"validation event 'Quakes' not found \(did you mean 'Quake'\?\)"):
        VmuSource(str(root), validation_events=["Quakes"]).posts("validation")
    with pytest.raises(KeyError, match="no split 'test'"):
        VmuSource(str(root)).posts("test")
    with pytest.raises(FileNotFoundError, match="posts.txt does not exist"):
        VmuSource(str(tmp_path / "nowhere")).posts("train")
    write_posts(root, [post("1", "a", "storm_fake_01", "fake"), post("2", "b", "storm_fake_01", "humor")])
    with pytest.raises(ValueError, match=r"posts.txt:3: unknown label 'humor'; valid: real, fake"):
        VmuSource(str(root)).posts("train")
    write_posts(root, [post("1", "a", "flood_01", "fake")])
    with pytest.raises(ValueError, match=r"posts.txt:2: cannot tell the event of 1 image \(flood_01\) from"):
        VmuSource(str(root)).posts("train")
    (root / "only").mkdir()
    write_posts(root / "only", [post("1", "a", "storm_fake_01", "fake")])
    with pytest.raises(
        FileNotFoundError, match="^data.root: .*Medieval2016_DevSet_Images does not exist .*; root must"
    ):
        VmuSource(str(root / "only")).posts("train")


def test_a_root_pointed_at_the_wrong_folder_is_named_by_its_recipe_key_with_what_the_folder_holds(
    tmp_path, monkeypatch
):
    source = build_source_spec({"type": "vmu", "root": str(tmp_path)}, "data.sources[1]")
    monkeypatch.setattr(vmu, "_index", lambda folder: pytest.fail(f"{folder} was read"))
    expected = (
        f"^data.sources\\[1\\].root: {re.escape(str(tmp_path / 'posts.txt'))} does not exist .*; "
        "root must be the MediaEval 2016 VMU folder holding posts.txt"
    )
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(FileNotFoundError, match=expected):
            read(source, "train")


def test_reading_a_file_without_the_image_tree_names_the_folder_by_its_recipe_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_posts(tmp_path, [post("1", "a", "storm_fake_01", "fake")])
    source = build_source_spec({"type": "vmu", "root": "."}, "data.sources[1]")
    given, resolved = re.escape(str(IMAGES)), re.escape(str(tmp_path / IMAGES))
    expected = (
        f"^data.sources\\[1\\].root: {given} does not exist \\(resolved to {resolved}\\); "
        "root must be the MediaEval 2016 VMU folder"
    )
    with pytest.raises(FileNotFoundError, match=expected):
        list(source.iter_posts("posts.txt"))


def test_a_file_given_to_read_posts_from_is_named_as_given_not_as_the_root(root, tmp_path):
    given = tmp_path / "elsewhere" / "test_posts.txt"
    expected = f"^{re.escape(str(given))} does not exist \\(resolved to {re.escape(str(given.absolute()))}\\)$"
    with pytest.raises(FileNotFoundError, match=expected):
        list(build_source_spec({"type": "vmu", "root": str(root)}, "data").iter_posts(given))


@pytest.mark.real_data
@pytest.mark.skipif(not REAL.is_dir(), reason=f"MediaEval 2016 VMU data not found at {REAL}")
def test_real_vmu():
    source = VmuSource(str(REAL))
    train, validation = source.posts("train"), source.posts("validation")
    assert len(train) + len(validation) == 15629
    assert Counter(p.labels["fake"] for p in train + validation) == {1: 9404, 0: 6225}
    assert Counter(p.labels["fake"] for p in validation) == {1: 2564, 0: 1217}
    assert len({p.meta["event"] for p in train + validation}) == 17
    assert sum(bool(p.images) for p in train + validation) == 13416
    with_images = VmuSource(str(REAL), require_image=True)
    assert len(with_images.posts("train")) == 11484 and len(with_images.posts("validation")) == 1932
    assert with_images.dropped == {"train": 364, "validation": 1849}


def test_reading_a_split_checks_the_image_folder_and_posts_txt_once_each(root, monkeypatch):
    checked = []
    check_exists = vmu.check_exists

    def counted(path, *args, **kwargs):
        checked.append(path.name)
        return check_exists(path, *args, **kwargs)

    monkeypatch.setattr(vmu, "check_exists", counted)
    monkeypatch.setattr(native, "check_exists", counted)  # read_delimited's
    VmuSource(str(root), validation_events=["Quake"]).posts("train")
    assert checked.count(IMAGES.name) == 1 and checked.count("posts.txt") == 1
