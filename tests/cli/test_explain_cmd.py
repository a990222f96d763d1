"""``faim explain`` writes a JSON per post, heat maps and a page for every task of a model reading every element
kind, and lists a post it cannot read with its error beside the others' explanations; a report replaces an earlier
one whole, and never a folder faim did not write."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from conftest import export_posts, overflowing_posts, tiny_recipe
from dump_scores import write_posts

import faim
from faim.cli import explain_cmd
from faim.cli.main import main
from faim.explain.report import PAGE_HEAD
from faim.notices import FaimWarning
from faim.wording import shell_path


def test_every_element_of_every_post_is_explained_for_every_task(exported: tuple[Path, Path], tmp_path: Path) -> None:
    model_dir, _ = exported
    posts = [post for post in export_posts() if post["id"] in ("full", "pictures")]
    assert main(["explain", str(model_dir), str(write_posts(tmp_path / "in", posts)), "-o", str(tmp_path / "out")]) == 0
    full = json.loads((tmp_path / "out" / "0000-full.json").read_text(encoding="utf-8"))
    assert [task["task"] for task in full["tasks"]] == ["harm", "topic", "flags"]
    harm = full["tasks"][0]
    assert {share["label"] for share in harm["shares"]} == {"text", "picture", "comment 1", "comment 2", "metadata"}
    assert sum(share["share"] for share in harm["shares"]) == pytest.approx(1.0)
    (reading,) = harm["tokens"]
    assert reading["reader"] == "tiny_text"
    assert [token["token"] for token in reading["tokens"]][:2] == ["t", "##h"]  # the tiny tokenizer reads characters
    assert len(harm["comments"]) == 2
    assert all(len(comment) == 1 and "attribution" in comment[0]["tokens"][0] for comment in harm["comments"])
    assert (tmp_path / "out" / harm["pictures"][0]["heat_map"]).is_file()
    pictures = json.loads((tmp_path / "out" / "0001-pictures.json").read_text(encoding="utf-8"))
    assert len(pictures["tasks"][1]["pictures"]) == 3 and pictures["tasks"][1]["tokens"] == []
    assert pictures["tasks"][1]["comments"] == []
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "post <bdi>full</bdi>" in page and "comment 2" in page and "0001-pictures-topic-picture2-heat.png" in page


def test_a_post_that_cannot_be_read_is_listed_with_its_error_and_the_others_are_explained(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    model_dir, _ = exported
    posts = write_posts(tmp_path / "in", [post for post in export_posts() if post["id"] in ("full", "text-only")])
    lines = posts.read_text(encoding="utf-8").splitlines()
    lost = json.dumps({"id": "lost", "text": "x", "images": ["nowhere.png"]})
    unmapped = json.dumps({"id": "unmapped", "caption": "a field the model does not read"})
    posts.write_text("\n".join([lines[0], lost, lines[1], unmapped]) + "\n", encoding="utf-8")
    assert main(["explain", str(model_dir), str(posts), "-o", str(tmp_path / "out")]) == 0
    listing = json.loads((tmp_path / "out" / "faim-explanations.json").read_text(encoding="utf-8"))["posts"]
    assert [entry["post"] for entry in listing] == ["full", "lost", "text-only", "unmapped"]  # in input order
    assert listing[0] == {"post": "full", "explanation": "0000-full.json"}
    assert listing[2] == {"post": "text-only", "explanation": "0001-text-only.json"}
    assert listing[1]["post"] == "lost" and listing[1]["error_kind"] == "image_missing"
    assert f"{posts}:2 (post id='lost') field 'images'" in listing[1]["error"]
    assert listing[3]["post"] == "unmapped" and listing[3]["error_kind"] == "empty"
    assert listing[3]["error"].endswith(
        "nothing the model reads (comments, image, meta, text): no comments, no image, no metadata, no text"
    )
    assert json.loads((tmp_path / "out" / "0001-text-only.json").read_text(encoding="utf-8"))["tasks"]
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "post <bdi>text-only</bdi>" in page and 'post <bdi>lost</bdi></h2><p class="error">not explained: ' in page
    assert page.index(">full<") < page.index(">lost<") < page.index(">text-only<") < page.index("unmapped")
    out = capsys.readouterr().out
    assert "explained 2 posts" in out and "2 not (faim-explanations.json gives why)" in out
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    said = " ".join(capsys.readouterr().out.split())  # --help names both kinds of post listed unexplained
    unexplained = "(a picture missing or not a picture, or nothing the model reads: empty), or whose scores"
    assert f"{unexplained} are not finite (NaN or infinite), is not explained" in said


def test_a_report_of_posts_none_of_which_can_be_read_gives_no_time_per_post(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    posts = tmp_path / "lost.jsonl"
    posts.write_text(json.dumps({"id": "lost", "text": "x", "images": ["nowhere.png"]}) + "\n", encoding="utf-8")
    assert main(["explain", str(exported[0]), str(posts), "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("explained 0 posts, 1 not (faim-explanations.json gives why)")


def test_a_saved_dataset_is_explained_as_the_help_says(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "saved"
    datasets.Dataset.from_dict({"id": ["a"], "text": ["a post"]}).save_to_disk(folder)
    assert main(["explain", str(exported[0]), str(folder), "-o", str(tmp_path / "out")]) == 0
    listing = json.loads((tmp_path / "out" / "faim-explanations.json").read_text(encoding="utf-8"))["posts"]
    assert listing == [{"post": "a", "explanation": "0000-a.json"}]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "a JSONL/CSV/TSV/Parquet file of posts, a folder of them, a glob (quote it) or a saved dataset" in said


def test_a_post_whose_scores_are_not_finite_is_listed_with_its_error_and_the_others_are_explained(
    overflowing: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    posts = write_posts(tmp_path / "in", overflowing_posts())
    assert main(["explain", str(overflowing[0]), str(posts), "-o", str(tmp_path / "out")]) == 0
    listing = json.loads((tmp_path / "out" / "faim-explanations.json").read_text(encoding="utf-8"))["posts"]
    assert [entry["post"] for entry in listing] == ["a", "viral", "b"]
    assert listing[1]["error_kind"] == "scores"
    said = "the model's scores (logits) of tasks 'harm', 'topic' are not finite (NaN or infinite)"
    assert listing[1]["error"].startswith(f"{posts}:2 (post id='viral'): {said}")
    assert listing[2] == {"post": "b", "explanation": "0001-b.json"}
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert 'post <bdi>viral</bdi></h2><p class="error">not explained: ' in page
    out = capsys.readouterr().out
    assert "explained 2 posts" in out and "1 not (faim-explanations.json gives why)" in out


def test_a_report_replaces_an_earlier_one_whole_and_a_folder_faim_did_not_write_is_refused_before_any_work(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    model_dir, _ = exported
    posts = write_posts(tmp_path / "in", [post for post in export_posts() if post["id"] in ("full", "text-only")])
    out = tmp_path / "out"
    assert main(["explain", str(model_dir), str(posts), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["explain", str(model_dir), str(posts), "-o", str(out), "--limit", "1"]) == 0
    assert capsys.readouterr().out.startswith("explained 1 post (")
    assert sorted(path.name for path in out.glob("*.json")) == ["0000-full.json", "faim-explanations.json"]
    listing = json.loads((out / "faim-explanations.json").read_text(encoding="utf-8"))
    assert listing["posts"] == [{"post": "full", "explanation": "0000-full.json"}]
    assert listing["files"] == sorted(path.name for path in out.iterdir() if path.name != "faim-explanations.json")
    earlier = tmp_path / "an earlier"  # a report written before reports listed their posts
    earlier.mkdir()
    (earlier / "index.html").write_text(f"{PAGE_HEAD}<style>", encoding="utf-8")
    for name in ("0000-old.json", "0000-old-picture0.png"):
        (earlier / name).write_text("old", encoding="utf-8")
    capsys.readouterr()
    assert main(["explain", str(model_dir), str(posts), "-o", str(earlier), "--limit", "1"]) == 0
    assert capsys.readouterr().out.endswith(f"; open {shell_path(earlier / 'index.html')}\n")  # for a shell
    assert not (earlier / "0000-old.json").exists() and (earlier / "faim-explanations.json").is_file()
    for name, files in (("mine", {"notes.txt": "keep me"}), ("site", {"index.html": "<html>", "data.json": "{}"})):
        mine = tmp_path / name
        mine.mkdir()
        for file, text in files.items():
            (mine / file).write_text(text, encoding="utf-8")
        capsys.readouterr()
        assert main(["explain", str(model_dir), str(posts), "-o", str(mine)]) == 2
        captured = capsys.readouterr()
        assert f"{mine}: exists and is not one faim wrote" in captured.err and "explained" not in captured.out
        assert sorted(path.name for path in mine.iterdir()) == sorted(files)


def test_a_kind_the_model_reads_that_no_post_holds_is_warned_of_naming_the_columns_no_mapping_reads(
    tiny_model_dir: Path, demo_data, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()[:2]]
    posts = tmp_path / "posts.jsonl"
    posts.write_text("".join(json.dumps(row | {"img": row.pop("image")}) + "\n" for row in rows), encoding="utf-8")
    assert main(["explain", str(tiny_model_dir), str(posts), "-o", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().err
    assert f"{posts}: no post holds any image, which the model reads" in said
    assert "--map image=COLUMN (columns of the data no mapping reads: label, topic, img)" in said


def test_metadata_holding_none_of_the_fields_the_model_reads_is_warned_of_as_faim_score_warns(
    overflowing: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    posts = tmp_path / "posts.jsonl"
    posts.write_text("".join(json.dumps({"id": n, "text": "a post", "like_count": n}) + "\n" for n in (1, 2)))
    out = tmp_path / "out"
    assert main(["explain", str(overflowing[0]), str(posts), "-o", str(out), "--map", "meta=like_count"]) == 0
    said = capsys.readouterr().err
    assert (
        f"faim explain: warning: {posts}: no post's metadata holds any field the model reads (likes), only "
        "like_count: each post is read with them missing; give each under the name the model reads"
    ) in said


def test_posts_holding_no_post_are_named_before_the_model_is_loaded_and_a_path_naming_no_model_before_them(
    tiny_model_dir: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "posts.csv"
    empty.write_text("id,text\n", encoding="utf-8")  # a header alone
    monkeypatch.setattr("faim.cli.explain_cmd.Detector.load", lambda path: pytest.fail("the model was loaded"))
    assert main(["explain", str(tiny_model_dir), str(empty), "-o", str(tmp_path / "out")]) == 2
    assert f"faim explain: error: {empty}: holds no post" in capsys.readouterr().err
    assert main(["explain", str(tmp_path / "model"), str(empty), "-o", str(tmp_path / "out")]) == 2
    assert f"faim explain: error: {tmp_path / 'model'}: does not exist" in capsys.readouterr().err


def test_an_output_that_is_the_model_or_lies_inside_it_is_refused_before_the_model_is_loaded(
    tiny_model_dir: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    posts = tmp_path / "posts.jsonl"
    posts.write_text(json.dumps({"id": "1", "text": "a post"}) + "\n", encoding="utf-8")
    monkeypatch.setattr("faim.cli.explain_cmd.Detector.load", lambda path: pytest.fail("the model was loaded"))
    before = sorted(path.relative_to(tiny_model_dir) for path in tiny_model_dir.rglob("*"))
    for out in (tiny_model_dir / "explained", tiny_model_dir):
        assert main(["explain", str(tiny_model_dir), str(posts), "-o", str(out)]) == 2
        refused = f"-o {out}: that is the model or a folder inside it ({tiny_model_dir}); the report goes elsewhere"
        assert f"faim explain: error: {refused}" in capsys.readouterr().err
    assert sorted(path.relative_to(tiny_model_dir) for path in tiny_model_dir.rglob("*")) == before


def test_a_limit_reading_part_of_the_posts_warns_of_an_input_holding_no_row_as_it_stops_reading(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    model_dir, _ = exported
    posts = write_posts(tmp_path / "in", [post for post in export_posts() if post["id"] in ("full", "text-only")])
    (posts.parent / "empty.jsonl").write_text("", encoding="utf-8")  # read before posts.jsonl
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", ".*holds no row", FaimWarning)  # raised where given, not lost at collection
        with pytest.raises(FaimWarning, match="empty.jsonl: holds no row"):
            main(["explain", str(model_dir), str(posts.parent), "-o", str(tmp_path / "out"), "--limit", "1"])


def test_an_interrupt_while_the_posts_are_read_ends_explaining_and_is_not_replaced_by_the_warning_of_an_empty_input(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model_dir, _ = exported
    posts = write_posts(tmp_path / "in", [post for post in export_posts() if post["id"] in ("full", "text-only")])
    (posts.parent / "empty.jsonl").write_text("", encoding="utf-8")

    def interrupted(posts):  # Ctrl-C once the first post is read
        next(iter(posts))
        raise KeyboardInterrupt

    monkeypatch.setattr(explain_cmd, "list", interrupted, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", ".*holds no row", FaimWarning)
        assert main(["explain", str(model_dir), str(posts.parent), "-o", str(tmp_path / "out"), "--limit", "1"]) == 130
    assert "faim: interrupted" in capsys.readouterr().err


def test_explaining_stopped_before_the_report_is_written_says_nothing_was_written_and_leaves_the_earlier_report(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model_dir, _ = exported
    posts = write_posts(tmp_path / "in", [post for post in export_posts() if post["id"] == "text-only"])
    out = tmp_path / "out"
    assert main(["explain", str(model_dir), str(posts), "-o", str(out)]) == 0
    earlier = {path.name: path.read_bytes() for path in out.iterdir()}
    capsys.readouterr()

    def stopped(*args, **kwargs):  # Ctrl-C, or SIGTERM, as the posts are explained
        raise KeyboardInterrupt

    monkeypatch.setattr(faim.Detector, "explain", stopped)
    assert main(["explain", str(model_dir), str(posts), "-o", str(out)]) == 130
    assert capsys.readouterr().err.endswith(f"faim: interrupted: nothing was written: {out} is left as it was\n")
    assert {path.name: path.read_bytes() for path in out.iterdir()} == earlier


def test_pictures_a_model_reads_only_to_pool_posts_are_not_warned_of_as_read_by_its_explanations(
    demo_data, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["fusion"] |= {"kinds": ["comments", "text"]}  # pictures embedded, never fused
    faim.build(recipe).save(str(tmp_path / "model"))
    posts = tmp_path / "posts.jsonl"
    posts.write_text("".join(json.dumps({"id": n, "text": "a post"}) + "\n" for n in (1, 2)), encoding="utf-8")
    assert main(["explain", str(tmp_path / "model"), str(posts), "-o", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().err
    assert "holds any image" not in said
    assert f"{posts}: no post holds any comments, which the model reads" in said
