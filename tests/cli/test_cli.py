"""The `faim` command line, run as a user would: train → eval → score → embed, and its errors."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import calibrated, pooling_detector, tiny_recipe, without_packages

from faim.calibration.fit import Calibration
from faim.cli.calibrate_cmd import fitted, head_said, kept_notes, prior_note
from faim.cli.common import resume_command
from faim.cli.main import command_warnings, main
from faim.components import RESERVED
from faim.data.sources import read_posts
from faim.data.targets import TaskSpec
from faim.detector import Detector
from faim.eval.benchmark_runs import write_dump
from faim.eval.recalibration import SIZES
from faim.notices import FaimWarning
from faim.recipe import as_recipe
from faim.recipe.sections import EvalConfig


def faim(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m faim ARGS``, warnings hidden unless ``env`` (added to the environment) shows them."""
    env = os.environ | {"PYTHONWARNINGS": "ignore"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "faim", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


@pytest.fixture(scope="module")
def trained(demo_data: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Train the tiny recipe once through the CLI; returns the run directory."""
    import yaml

    root = tmp_path_factory.mktemp("cli")
    recipe = root / "tiny.yaml"
    recipe.write_text(yaml.safe_dump(tiny_recipe(demo_data, root / "run", max_epochs=2)))
    result = faim("train", recipe, "--set", "train.seed=3")
    assert result.returncode == 0, result.stderr
    assert "auroc" in result.stdout and "model:" in result.stdout
    return root / "run"


def test_train_writes_artifact_report_logs_and_checkpoints(trained: Path) -> None:
    assert (trained / "model" / "faim.json").is_file()
    assert (trained / "eval" / "metrics.json").is_file()
    assert (trained / "eval" / "harmful_roc.png").is_file()
    assert list((trained / "logs").rglob("metrics.csv"))
    assert list((trained / "tensorboard").rglob("events.out.tfevents.*"))
    assert (trained / "checkpoints" / "version_0" / "last.ckpt").is_file()
    report = json.loads((trained / "eval" / "metrics.json").read_text())
    harmful = report["tasks"]["harmful"]
    assert set(harmful["ablations"]) == {"without_text", "without_image", "without_comments"}
    assert set(harmful["slices"]) == {"group", "weather"}


def test_eval_on_a_file_with_column_mapping(trained: Path, demo_data: dict[str, Path], tmp_path: Path) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text(
        "\n".join(json.dumps({"pid": r["id"], "caption": r["text"], "pic": r["image"], "y": r["label"]}) for r in rows)
    )
    image_root = demo_data["validation"].parent
    out = tmp_path / "report"
    result = faim(
        "eval", trained / "model", renamed, "--map", "id=pid", "--map", "text=caption", "--map", "image=pic",
        "--map", "labels.harmful=y", "--image-root", image_root, "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "auroc" in result.stdout
    report = json.loads((out / "metrics.json").read_text())
    assert report["tasks"]["harmful"]["metrics"]["n"] == len(rows) and report["split"] == "(every row)"
    assert "## harmful" in (out / "metrics.md").read_text() or "harmful" in (out / "metrics.md").read_text()


def test_eval_sliced_by_a_field_no_post_has_says_so_and_how_to_give_one(trained: Path, demo_data) -> None:
    result = faim("eval", trained / "model", "--slice", "colour", "-o", trained / "eval-colour")
    assert result.returncode == 2
    assert (
        "--slice: no post has the meta field 'colour' (fields they carry: lang, topic); the recipe's data.columns meta "
        "lists what its split carries, and --map does not reach it: give a file as DATA with --map meta=COLUMN"
    ) in result.stderr
    given = faim("eval", trained / "model", demo_data["validation"], "--slice", "colour", "-o", trained / "eval-c")
    assert given.returncode == 2
    assert "'colour' (fields they carry: lang); map one with --map meta=COLUMN" in given.stderr


def test_eval_without_data_uses_the_recipe_split_and_names_it(trained: Path) -> None:
    result = faim("eval", trained / "model", "--split", "train", "-o", trained / "eval-train")
    assert result.returncode == 0, result.stderr
    assert "- split: `train`" in (trained / "eval-train" / "metrics.md").read_text()


def test_eval_of_a_glob_writes_its_report_beside_the_model_in_a_folder_named_without_wildcards(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(tiny_model_dir, tmp_path / "model")
    (tmp_path / "dumps").mkdir()
    shutil.copy(demo_data["validation"], tmp_path / "dumps" / "part-1.jsonl")
    monkeypatch.chdir(tmp_path)
    images = str(demo_data["validation"].parent)
    assert main(["eval", "model", "dumps/part-*.jsonl", "--map", "labels.harmful=label", "--image-root", images]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dumps", "eval-dumps", "model"]
    assert (tmp_path / "eval-dumps" / "metrics.json").is_file()


@pytest.mark.parametrize("option", [["--map", "labels.harmful=label"], ["--image-root", "."]])
def test_eval_without_data_refuses_what_reads_data(option: list[str], tiny_model_dir: Path, capsys) -> None:
    assert main(["eval", str(tiny_model_dir), *option]) == 2
    assert "--map and --image-root read DATA: without it the recipe's split is read" in capsys.readouterr().err


def test_eval_of_a_recipe_split_without_labels_says_to_give_a_labelled_file_not_to_map_the_split(
    unlabelled_split_model_dir: Path, capsys
) -> None:
    assert main(["eval", str(unlabelled_split_model_dir)]) == 2
    error = capsys.readouterr().err
    assert "validation.jsonl: no post carries a label for any task (harmful); the recipe's split has no labels" in error
    assert "give a labelled file as DATA with --map labels.TASK=COLUMN, or evaluate another split with --split" in error
    assert "map a column to a task's labels" not in error  # --map is refused without DATA


@pytest.mark.parametrize(
    ("column", "note"),
    [
        ("lang", "read the column instead with --map meta=lang"),
        ("language", "read the column instead with --map meta.lang=language"),
    ],
)
def test_eval_sliced_by_detected_language_notes_a_language_column_it_does_not_read(
    column: str, note: str, tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, capsys
) -> None:
    rows = [json.loads(line) | {column: "fr"} for line in demo_data["validation"].read_text().splitlines()]
    data = tmp_path / "posts.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    arguments = ["eval", str(tiny_model_dir), str(data), "--map", "labels.harmful=label", "--slice", "lang"]
    arguments += ["--image-root", str(demo_data["validation"].parent), "-o", str(tmp_path / "report")]
    assert main(arguments) == 0
    said = capsys.readouterr().err
    assert f"faim eval: warning: {data} has a column {column!r} faim eval does not read: each post's language" in said
    assert note in said
    mapped = "meta=lang" if column == "lang" else f"meta.lang={column}"
    assert main([*arguments, "--map", mapped]) == 0
    assert "warning:" not in capsys.readouterr().err  # mapped: the slices are the column's
    report = json.loads((tmp_path / "report" / "metrics.json").read_text(encoding="utf-8"))
    assert set(report["tasks"]["harmful"]["slices"]) == {"fr"}


def test_eval_slices_a_locale_mapped_beside_the_language_from_one_column(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path
) -> None:
    lines = demo_data["validation"].read_text().splitlines()
    locales = ["pt-BR", "pt-PT", "es-MX"]
    rows = [json.loads(line) | {"lang": locales[i % 3]} for i, line in enumerate(lines)]
    data = tmp_path / "posts.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    arguments = ["eval", str(tiny_model_dir), str(data), "--map", "labels.harmful=label"]
    arguments += ["--map", "meta.lang=lang", "--map", "meta.locale=lang", "--slice", "locale"]  # one column, two fields
    arguments += ["--image-root", str(demo_data["validation"].parent), "-o", str(tmp_path / "report")]
    assert main(arguments) == 0
    report = json.loads((tmp_path / "report" / "metrics.json").read_text(encoding="utf-8"))
    assert set(report["tasks"]["harmful"]["slices"]) == set(locales)
    assert set(report["tasks"]["harmful"]["languages"]) == {"pt", "es"}  # the column's languages, none detected


def test_score_and_embed_write_one_row_per_post_with_errors_recorded(trained: Path, demo_data, tmp_path: Path) -> None:
    lines = demo_data["validation"].read_text().splitlines()[:30]
    broken = json.loads(lines[0]) | {"id": "broken", "image": "images/does_not_exist.jpg"}
    dump = demo_data["validation"].parent / "dump.jsonl"
    dump.write_text("\n".join([json.dumps(broken), *lines[1:]]) + "\n")
    out = tmp_path / "scores.parquet"
    result = faim("score", trained / "model", dump, "-o", out)
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out).to_pylist()
    assert len(table) == 30
    errors = {row["id"]: row["error"] for row in table if row["error"]}
    assert list(errors) == ["broken"] and "does_not_exist.jpg" in errors["broken"]
    scored = [row for row in table if not row["error"]]
    assert all(0.0 <= row["harmful"] <= 1.0 and row["harmful.decision"] in ("benign", "harmful") for row in scored)
    embedded = tmp_path / "embeddings.parquet"
    assert faim("embed", trained / "model", dump, "-o", embedded).returncode == 0
    rows = pq.read_table(embedded).to_pylist()
    assert len(rows) == 30 and len(rows[1]["embedding"]) == 32


def test_score_pooled_by_picture_reports_the_groups(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    detector.save(str(tmp_path / "model"))
    dump = write_dump(posts, tmp_path / "dump.jsonl")
    result = faim("score", tmp_path / "model", dump, "-o", tmp_path / "out", "--pool-by-image", "--workers", "1")
    assert result.returncode == 0, result.stderr
    assert "pooled by picture: 128 of 160 posts share a picture, in 40 groups" in result.stdout
    table = pq.read_table(tmp_path / "out").to_pylist()
    assert len(table) == 160 and sum(row["picture_group"] is None for row in table) == 32


def test_eval_and_calibrate_of_a_model_pooling_by_picture_say_which_posts_they_measured(
    demo_data, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from faim.cli import calibrate_cmd

    drawn_together = []  # the groups of each learning curve, which a calibrated model's range draws together
    curve = calibrate_cmd.learning_curve
    monkeypatch.setattr(
        calibrate_cmd, "learning_curve", lambda *a, **k: drawn_together.append(k.get("groups")) or curve(*a, **k)
    )
    detector, posts = pooling_detector(demo_data, tmp_path)
    detector.save(str(tmp_path / "model"))
    dump = write_dump(posts, tmp_path / "dump.jsonl")
    rows = [json.loads(line) | {"label": post.labels["harmful"]} for line, post in zip(dump.open(), posts, strict=True)]
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    common = [str(tmp_path / "model"), str(dump), "--map", "labels.harmful=label"]
    assert main(["eval", *common, "-o", str(tmp_path / "eval")]) == 0
    pooled = "measured on posts pooled by shared picture (eval.pool_by_image 1.0), as the model scores them"
    assert pooled in capsys.readouterr().out and f"- {pooled}" in (tmp_path / "eval" / "metrics.md").read_text()
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text())["pooled_by_image"] == 1.0
    assert main(["calibrate", *common, "-o", str(tmp_path / "new"), "--sizes", "50", "--draws", "2"]) == 0
    alone = "Measured on each post on its own: this model pools posts by shared picture (eval.pool_by_image 1.0)"
    assert alone in capsys.readouterr().out
    assert alone in (tmp_path / "new-calibration" / "calibration.md").read_text()
    (groups,) = drawn_together  # the 128 posts sharing a picture in 40 groups, the other 32 each on its own
    assert len(groups) == 160 and len(np.unique(groups)) == 72


def test_recipe_show_and_list(demo_data, tmp_path: Path) -> None:
    shown = faim("recipe", "show", "demo_multimodal", "--set", "train.max_epochs=2")
    assert shown.returncode == 0, shown.stderr
    assert "max_epochs: 2" in shown.stdout and "seed: 0" in shown.stdout
    listed = faim("recipe", "list")
    assert listed.returncode == 0
    for name in ("demo_multimodal", "hf_text", "timm_image", "attention", "interaction", "multilabel", "jsonl"):
        assert name in listed.stdout
    reserved = [(kind, key) for kind, keys in RESERVED.items() for key in keys if key != "type"]
    headings = {line.split(" ")[0]: line for line in listed.stdout.splitlines() if line.endswith("):")}
    assert reserved and all(f"also takes {key}" in headings[f"{kind}s"] for kind, key in reserved)


def test_unknown_recipe_key_exits_with_the_yaml_path(demo_data, tmp_path: Path) -> None:
    result = faim("recipe", "show", "demo_multimodal", "--set", "model.fusion.dimm=8")
    assert result.returncode == 2
    assert "model.fusion.dimm" in result.stderr and "did you mean 'dim'" in result.stderr


def install_broken_plugin(folder: Path) -> dict[str, str]:
    """Install, in ``folder``, a package whose ``faim.plugins`` entry point imports a module that is not installed;
    returns the environment that puts it on the path."""
    info = folder / "broken_faim_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-faim-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[faim.plugins]\nbroken = broken_faim_plugin\n")
    (folder / "broken_faim_plugin.py").write_text("import a_module_not_installed\n")
    path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path, "PYTHONWARNINGS": "default"}


def test_a_plugin_that_fails_to_load_is_warned_of_and_named_where_a_recipe_needs_a_type_it_lacks(
    tmp_path: Path,
) -> None:
    env = install_broken_plugin(tmp_path / "site")
    failure = (
        "plug-in 'broken' (entry point faim.plugins: broken = broken_faim_plugin, package broken-faim-plugin) failed "
        "to load: ModuleNotFoundError: No module named 'a_module_not_installed' (install the Python module "
        "'a_module_not_installed' it imports, or uninstall broken-faim-plugin)"
    )
    shown = faim("recipe", "show", "demo_multimodal", env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"faim recipe: warning: {failure}; its components are not registered\n" in shown.stderr
    assert "UserWarning" not in shown.stderr and "faim-sdk[torch]" not in shown.stderr
    needing = faim("recipe", "show", "demo_multimodal", "--set", "model.fusion.type=broken_fusion", env=env)
    assert needing.returncode == 2
    assert "model.fusion.type: unknown fusion 'broken_fusion'" in needing.stderr and f"; {failure}" in needing.stderr


def test_a_warning_faim_gives_is_one_line_and_another_packages_is_shown_as_python_shows_it(
    monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    shown_by_python = []
    monkeypatch.setattr("warnings.showwarning", lambda *args: shown_by_python.append(args))
    show = command_warnings("score")
    show(FaimWarning("a plug-in failed to load"), FaimWarning, "/site/faim/components.py", 65)
    show(RuntimeWarning("divide by zero"), RuntimeWarning, "/site/faim/pooling.py", 3)  # numpy's, from faim's line
    assert capsys.readouterr().err == "faim score: warning: a plug-in failed to load\n"
    assert [(str(args[0]), args[1]) for args in shown_by_python] == [("divide by zero", RuntimeWarning)]


def test_a_plugin_that_fails_to_load_is_warned_of_once_by_a_scoring_run_not_by_each_worker(
    trained: Path, demo_data, tmp_path: Path
) -> None:
    env = install_broken_plugin(tmp_path / "site")
    dump = tmp_path / "dump.jsonl"
    dump.write_text("\n".join(demo_data["validation"].read_text().splitlines()[:12]) + "\n")
    args = ("--image-root", demo_data["validation"].parent, "--workers", "3", "--shard-rows", "2")
    result = faim("score", trained / "model", dump, "-o", tmp_path / "out", *args, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("plug-in 'broken'") == 1 and "faim score: warning: plug-in 'broken'" in result.stderr
    assert len(pq.read_table(tmp_path / "out")) == 12


def test_training_on_a_corrupt_image_names_file_row_and_field(demo_data, tmp_path: Path, write_recipe) -> None:
    root = tmp_path / "data"
    root.mkdir()
    (root / "bad.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    (root / "train.jsonl").write_text(
        json.dumps({"id": "p1", "text": "hi", "image": "bad.jpg", "label": 1, "topic": "x"}) + "\n"
    )
    recipe = tiny_recipe({"train": root / "train.jsonl", "validation": root / "train.jsonl"}, tmp_path / "run")
    result = faim("train", write_recipe(recipe))
    assert result.returncode == 2
    assert "train.jsonl:1" in result.stderr and "p1" in result.stderr and "'images'" in result.stderr
    assert "bad.jpg" in result.stderr


def test_missing_data_file_names_the_split_and_path(demo_data, tmp_path: Path, write_recipe) -> None:
    recipe = tiny_recipe({"train": tmp_path / "absent.jsonl", "validation": demo_data["validation"]}, tmp_path / "run")
    result = faim("train", write_recipe(recipe))
    assert result.returncode == 2
    assert "data.train" in result.stderr and "absent.jsonl does not exist" in result.stderr


def test_eval_robustness_reports_a_drop_per_perturbation(trained: Path, tmp_path: Path) -> None:
    result = faim("eval", trained / "model", "--split", "validation", "--robustness", "-o", tmp_path / "report")
    assert result.returncode == 0, result.stderr
    tables = json.loads((tmp_path / "report" / "robustness.json").read_text())["harmful"]
    assert set(tables) >= {"text.leetspeak", "text.homoglyphs", "image.jpeg", "image.overlay"}
    assert all("auroc_drop" in values for values in tables.values())
    assert "text.leetspeak" in result.stdout


def shifted_validation(demo_data: dict[str, Path], path: Path) -> Path:
    """The validation posts with five of every six positives left out: a platform where harm is rarer."""
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    positives = [row for row in rows if row["label"] == 1]
    kept = [row for row in rows if row["label"] == 0] + positives[::6]
    path.write_text("\n".join(json.dumps(row) for row in kept) + "\n")
    return path


def test_calibrate_refits_on_labelled_posts_into_a_new_model(trained: Path, demo_data, tmp_path: Path) -> None:
    shifted = shifted_validation(demo_data, tmp_path / "ours.jsonl")
    root = demo_data["validation"].parent
    before = {p.name: p.read_bytes() for p in (trained / "model").iterdir() if p.is_file()}
    common = ["--map", "labels.harmful=label", "--image-root", root, "--sizes", "20,40", "--draws", "5"]
    result = faim("calibrate", trained / "model", shifted, "-o", tmp_path / "ours", *common)
    assert result.returncode == 0, result.stderr
    assert "40 labels" in result.stdout and "unlabelled (EM)" in result.stdout
    written = json.loads((tmp_path / "ours" / "faim.json").read_text())["tasks"][0]
    assert f"harmful: refitted temperature {written['temperature']:.3f}, " in result.stdout
    assert f"threshold {written['threshold']:.3f}" in result.stdout
    assert {p.name: p.read_bytes() for p in (trained / "model").iterdir() if p.is_file()} == before
    report = json.loads((tmp_path / "ours-calibration" / "calibration.json").read_text())["tasks"]["harmful"]
    assert [row["labels"] for row in report["learning_curve"]] == [20, 40]
    assert (tmp_path / "ours-calibration" / "calibration_harmful.png").is_file()
    evaluated = faim("eval", tmp_path / "ours", shifted, "--map", "labels.harmful=label", "--image-root", root,
                     "-o", tmp_path / "eval")  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    after = json.loads((tmp_path / "eval" / "metrics.json").read_text())["tasks"]["harmful"]["metrics"]["ece"]
    assert after < report["as_is"]["ece"]


def test_calibrate_help_gives_the_sizes_the_learning_curve_is_drawn_at_by_default(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    default = f"(default: {','.join(map(str, SIZES))}, faim.eval.recalibration.SIZES)"
    assert default in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", ["calibrate", "train"])
def test_calibrate_and_train_help_say_a_multilabel_task_is_fitted_no_temperature_or_threshold(
    command: str, capsys: pytest.CaptureFixture
) -> None:
    # both said each task's temperature and threshold are fitted, where a multilabel task is calibrated on no labels
    with pytest.raises(SystemExit):
        main([command, "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "a multilabel task's probabilities are not calibrated, each label decided at 0.5" in said


@pytest.mark.parametrize("command", [[], ["eval"], ["calibrate"], ["explain"], ["score"]])
def test_every_help_naming_the_files_posts_are_read_from_names_tsv(
    command: list[str], capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    tsv = tmp_path / "posts.tsv"
    tsv.write_text("id\ttext\na\ta post\n", encoding="utf-8")
    assert [(post.id, post.text) for post in read_posts(tsv)] == [("a", "a post")]  # as every command reads posts
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    said = capsys.readouterr().out
    assert "JSONL/CSV/TSV/Parquet" in " ".join(said.split()) and "JSONL/CSV/Parquet" not in said


def flipped_validation(demo_data: dict[str, Path], path: Path) -> Path:
    """The validation posts with every label turned round: a platform calling harmful what the model learnt to call
    benign."""
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    path.write_text("\n".join(json.dumps(row | {"label": 1 - row["label"]}) for row in rows) + "\n")
    return path


def test_calibrate_warns_where_the_users_labels_are_not_what_the_model_ranks(
    trained: Path, demo_data, tmp_path: Path
) -> None:
    flipped = flipped_validation(demo_data, tmp_path / "flipped.jsonl")
    common = ["--map", "labels.harmful=label", "--image-root", demo_data["validation"].parent, "--sizes", "20"]
    ours = faim("calibrate", trained / "model", demo_data["validation"], "-o", tmp_path / "ours", *common)
    theirs = faim("calibrate", trained / "model", flipped, "-o", tmp_path / "theirs", *common)
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    assert "Ranking of the posts one by one, which a calibration keeps: AUROC" in ours.stdout
    assert "Warning" not in ours.stdout and "at the edge" not in ours.stdout
    # no temperature makes scores read backwards follow the labels: the fit runs to the largest it searches
    edge = "refitted temperature 20.000 (at the upper edge of the range 0.05–20 the fit searches: the model's scores"
    assert edge in theirs.stdout
    assert "ranks the posts worse than chance" in theirs.stdout and "(`faim calibrate --head`)" in theirs.stdout
    assert "worse than chance" in (tmp_path / "theirs-calibration" / "calibration.md").read_text()
    words = json.loads((tmp_path / "theirs-calibration" / "calibration.json").read_text())["tasks"]["harmful"]["terms"]
    assert words["terms"] > 0 and "Words the model and these labels read the opposite way" in theirs.stdout
    assert f"'{words['shown'][0]['term']}' ({words['shown'][0]['posts'][0]} posts: the model flags" in theirs.stdout


def test_calibrate_head_corrects_the_head_on_labels_the_model_did_not_learn(
    trained: Path, demo_data, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flipped = flipped_validation(demo_data, tmp_path / "flipped.jsonl")
    common = ["--map", "labels.harmful=label", "--image-root", demo_data["validation"].parent, "--sizes", "40"]
    plain = faim("calibrate", trained / "model", flipped, "-o", tmp_path / "plain", *common, "--draws", "3")
    result = faim("calibrate", trained / "model", flipped, "-o", tmp_path / "ours", *common, "--draws", "3", "--head")
    assert plain.returncode == 0 and result.returncode == 0, plain.stderr + result.stderr
    posts = len(flipped.read_text().splitlines())
    assert f"harmful: head corrected on {posts} labelled posts; refitted temperature" in result.stdout
    assert "40 labels, head corrected" in result.stdout
    report = json.loads((tmp_path / "ours-calibration" / "calibration.json").read_text())["tasks"]["harmful"]
    assert [row["labels"] for row in report["head_curve"]] == [row["labels"] for row in report["learning_curve"]]
    assert "correction: true" in (tmp_path / "ours" / "recipe.yaml").read_text()
    metrics = {}
    for name in ("plain", "ours"):
        evaluated = main(["eval", str(tmp_path / name), str(flipped), "--map", "labels.harmful=label", "--image-root",
                          str(demo_data["validation"].parent), "-o", str(tmp_path / f"eval_{name}")])  # fmt: skip
        assert evaluated == 0
        report_path = tmp_path / f"eval_{name}" / "metrics.json"
        metrics[name] = json.loads(report_path.read_text())["tasks"]["harmful"]["metrics"]
    # a calibration keeps the model's order, which these labels reverse; the saved correction reads them anew
    assert metrics["ours"]["auroc"] > 0.7 > 0.5 > metrics["plain"]["auroc"]
    capsys.readouterr()
    both = main(["calibrate", str(trained / "model"), str(flipped), "-o", str(tmp_path / "x"), "--head",
                 "--unlabelled"])  # fmt: skip
    assert both != 0 and "cannot go with --unlabelled" in capsys.readouterr().err
    rows = flipped.read_text().splitlines()
    by_class = {label: [row for row in rows if json.loads(row)["label"] == label][:2] for label in (0, 1)}
    four = tmp_path / "four.jsonl"  # two of each class: too few for five folds
    four.write_text("\n".join(by_class[0] + by_class[1]) + "\n")
    root = str(demo_data["validation"].parent)
    few = main(["calibrate", str(trained / "model"), str(four), "-o", str(tmp_path / "four"), "--map",
                "labels.harmful=label", "--image-root", root, "--sizes", "2", "--head"])  # fmt: skip
    assert few == 0
    assert "harmful: head kept (4 labelled posts: a correction needs 5 at least); refitted temperature" in (
        capsys.readouterr().out
    )


def test_calibrate_head_says_a_multiclass_head_is_kept() -> None:
    # --head on a model of a binary and a multiclass task said the multiclass task's refitted temperature alone, as
    # if its head had been corrected with the binary one's
    topic = TaskSpec("topic", "multiclass", ("a", "b", "c"))
    harmful = TaskSpec("harmful", "binary", ("no", "yes"))
    assert head_said(topic, False, 40) == "head kept (--head corrects binary heads alone, not a multiclass one); "
    assert head_said(harmful, False, 4) == "head kept (4 labelled posts: a correction needs 5 at least); "
    assert head_said(harmful, True, 40) == "head corrected on 40 labelled posts; "


def test_calibrate_head_says_a_multilabel_head_is_kept() -> None:
    # --head on a model of a binary and a multilabel task gave the multilabel task the note that its probabilities are
    # not calibrated, but not that its head was kept, as a multiclass task's line says
    tags = TaskSpec("tags", "multilabel", ("a", "b"))
    harmful = TaskSpec("harmful", "binary", ("no", "yes"))
    tasks = [harmful, tags]
    assert kept_notes(tasks, tasks, unlabelled=False, head=True) == [
        "tags: head kept (--head corrects binary heads alone, not a multilabel one); a multilabel task's probabilities "
        "are not calibrated; kept as they were"
    ]
    assert kept_notes(tasks, tasks, unlabelled=False, head=False) == [
        "tags: a multilabel task's probabilities are not calibrated; kept as they were"
    ]


def test_calibrate_says_how_to_read_the_labels_of_a_task_whose_column_of_its_name_is_not_mapped(
    demo_data, tmp_path: Path, capsys
) -> None:
    # it said tone: no post carries its label; its calibration is kept as it was, beside the file's column tone
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["heads"]["tone"] = {"type": "multiclass", "labels": ["calm", "angry"]}
    from faim import Recipe, build

    model = build(recipe).save(str(tmp_path / "model"), Recipe.from_dict(recipe))
    data = tmp_path / "posts.csv"
    rows = "".join(f"p{i},post {i},{i % 2},{['calm', 'angry'][i % 2]}\n" for i in range(6))
    data.write_text(f"id,text,label,tone\n{rows}", encoding="utf-8")
    given = ["calibrate", str(model), str(data), "--map", "labels.harmful=label", "--sizes", "2", "-o"]
    assert main([*given, str(tmp_path / "new")]) == 0
    assert (
        "tone: no post carries its label; its calibration is kept as it was; read its labels from column 'tone' with "
        "--map labels.tone=tone"
    ) in capsys.readouterr().out


def test_calibrate_unlabelled_moves_the_prior_towards_the_posts_share(trained: Path, demo_data, tmp_path: Path) -> None:
    shifted = shifted_validation(demo_data, tmp_path / "ours.jsonl")
    root = demo_data["validation"].parent
    result = faim("calibrate", trained / "model", shifted, "--unlabelled", "--image-root", root, "-o", tmp_path / "em")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "em" / "faim.json").read_text())
    (task,) = manifest["tasks"]
    rows = [json.loads(line) for line in shifted.read_text().splitlines()]
    share = sum(row["label"] for row in rows) / len(rows)
    old = json.loads((trained / "model" / "faim.json").read_text())["tasks"][0]["prior"]
    assert abs(task["prior"] - share) < abs(old - share)
    labels = ["--map", "labels.harmful=label", "--sizes", "20", "--draws", "2"]
    labelled = faim("calibrate", trained / "model", shifted, "--unlabelled", "--image-root", root, *labels,
                    "-o", tmp_path / "em_labelled")  # fmt: skip
    assert labelled.returncode == 0, labelled.stderr
    assert json.loads((tmp_path / "em_labelled" / "faim.json").read_text())["tasks"] == manifest["tasks"]
    assert "unlabelled (EM)" in labelled.stdout  # the labels given are read for the report alone


def test_calibrate_on_one_class_keeps_the_calibration_and_without_enough_labels_writes_no_curve(
    trained: Path, demo_data, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    negatives = tmp_path / "negatives.jsonl"
    negatives.write_text("\n".join(json.dumps(row) for row in rows if row["label"] == 0) + "\n")
    common = ["--map", "labels.harmful=label", "--image-root", demo_data["validation"].parent]
    result = faim("calibrate", trained / "model", negatives, "-o", tmp_path / "one", *common)
    assert result.returncode == 0, result.stderr
    assert "harmful: every labelled post is 'benign'; its calibration is kept as it was" in result.stdout
    tasks = [json.loads((model / "faim.json").read_text())["tasks"] for model in (trained / "model", tmp_path / "one")]
    assert tasks[1] == tasks[0]
    few = faim("calibrate", trained / "model", demo_data["validation"], "-o", tmp_path / "few", *common, "--sizes=500")
    assert few.returncode == 0, few.stderr
    assert (
        f"No learning curve: {len(rows)} labelled posts leave none to measure on."
        in (tmp_path / "few-calibration" / "calibration.md").read_text()
    )


def test_calibrate_says_which_sizes_it_leaves_out_of_the_learning_curve_and_why(
    tiny_model_dir: Path, demo_data, tmp_path: Path, capsys
) -> None:
    common = ["--map", "labels.harmful=label", "--image-root", str(demo_data["validation"].parent), "--draws", "2"]
    assert (
        main(["calibrate", str(tiny_model_dir), str(demo_data["validation"]), "-o", str(tmp_path / "m"), *common]) == 0
    )
    said = "Left out of the learning curve: 200, 500 labels, as fitting on that many would leave none of the 160 "
    assert said in capsys.readouterr().out
    assert said in (tmp_path / "m-calibration" / "calibration.md").read_text()
    report = json.loads((tmp_path / "m-calibration" / "calibration.json").read_text())["tasks"]["harmful"]
    assert report["sizes_left_out"] == [200, 500] and [row["labels"] for row in report["learning_curve"]] == [50, 100]


def test_calibrate_with_head_says_which_sizes_it_leaves_out_of_the_head_corrected_curve(
    tiny_model_dir: Path, demo_data, tmp_path: Path, capsys
) -> None:
    common = ["--map", "labels.harmful=label", "--image-root", str(demo_data["validation"].parent), "--draws", "2"]
    arguments = ["calibrate", str(tiny_model_dir), str(demo_data["validation"]), "-o", str(tmp_path / "m"), "--head"]
    assert main([*arguments, *common, "--sizes=3,50"]) == 0
    said = "Left out of the head-corrected learning curve: 3 labels, as a head correction needs 5 labelled posts"
    assert said in capsys.readouterr().out
    assert said in (tmp_path / "m-calibration" / "calibration.md").read_text()
    report = json.loads((tmp_path / "m-calibration" / "calibration.json").read_text())["tasks"]["harmful"]
    assert report["head_sizes_left_out"] == [3] and [row["labels"] for row in report["head_curve"]] == [50]


def test_calibrate_names_each_task_it_keeps_as_it_was_and_why(exported, tmp_path: Path, capsys) -> None:
    posts = tmp_path / "posts.jsonl"
    rows = [{"id": str(i), "text": f"post {i}", "meta": {"likes": i, "shares": 1}, "harm": i % 2} for i in range(40)]
    posts.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    arguments = ["calibrate", str(exported[0]), str(posts), "-o", str(tmp_path / "new"), "--sizes=20", "--draws=2"]
    assert main([*arguments, "--map", "labels.harm=harm"]) == 0
    said = capsys.readouterr().out
    assert "topic: no post carries its label; its calibration is kept as it was" in said
    assert "flags: a multilabel task's probabilities are not calibrated; kept as they were" in said
    assert "harm: refitted temperature" in said
    tasks = [json.loads((model / "faim.json").read_text())["tasks"] for model in (exported[0], tmp_path / "new")]
    assert [task for task in tasks[1] if task["name"] != "harm"] == [
        task for task in tasks[0] if task["name"] != "harm"
    ]
    moving = ["calibrate", str(tmp_path / "new"), str(posts), "-o", str(tmp_path / "moved"), "--unlabelled"]
    assert main(moving) == 0  # from the model calibrated above, which records the prior EM starts at
    said = capsys.readouterr().out
    assert "topic: --unlabelled moves a binary task's share of positives only; kept as it was" in said
    assert "flags: a multilabel task's probabilities are not calibrated" in said and "harm: share of positives" in said


def test_calibrate_stopped_before_the_new_model_is_written_says_nothing_was_written_and_leaves_its_folder(
    exported, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    posts = tmp_path / "posts.jsonl"
    rows = [{"id": str(i), "text": f"post {i}", "harm": i % 2} for i in range(40)]
    posts.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "new"
    out.mkdir()  # an empty folder, which the new model may take the place of

    def stopped(*args, **kwargs):  # Ctrl-C, or SIGTERM, as the learning curve is drawn
        raise KeyboardInterrupt

    monkeypatch.setattr("faim.cli.calibrate_cmd.learning_curve", stopped)
    arguments = ["calibrate", str(exported[0]), str(posts), "-o", str(out), "--map", "labels.harm=harm"]
    assert main(arguments) == 130
    assert capsys.readouterr().err.endswith(f"faim: interrupted: nothing was written: {out} is left as it was\n")
    assert sorted(tmp_path.iterdir()) == [out, posts] and list(out.iterdir()) == []


def test_calibrate_unlabelled_says_labels_all_of_one_class_are_left_out_of_its_report(
    demo_data, tmp_path: Path, capsys
) -> None:
    detector, _ = calibrated(demo_data, tmp_path, logit_shift=False)  # a model whose calibration records its prior
    detector.save(str(tmp_path / "model"))
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    negatives = tmp_path / "negatives.jsonl"
    negatives.write_text("\n".join(json.dumps(row) for row in rows if row["label"] == 0) + "\n")
    arguments = ["calibrate", tmp_path / "model", negatives, "--unlabelled", "--map", "labels.harmful=label",
                 "--image-root", demo_data["validation"].parent, "-o", tmp_path / "em"]  # fmt: skip
    assert main([str(argument) for argument in arguments]) == 0
    said = capsys.readouterr().out
    assert "harmful: every labelled post is 'benign'; the report leaves them out (measuring a calibration" in said
    assert "harmful: share of positives" in said and not (tmp_path / "em-calibration").exists()


def test_calibrate_writing_no_report_removes_the_report_an_earlier_calibration_left_beside_the_model(
    tiny_model_dir: Path, demo_data, tmp_path: Path, capsys
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    negatives = tmp_path / "negatives.jsonl"
    negatives.write_text("\n".join(json.dumps(row) for row in rows if row["label"] == 0) + "\n")
    common = ["--map", "labels.harmful=label", "--image-root", str(demo_data["validation"].parent), "--draws", "2"]
    model = [str(tiny_model_dir), "-o", str(tmp_path / "m")]
    assert main(["calibrate", model[0], str(demo_data["validation"]), *model[1:], *common, "--sizes=50"]) == 0
    assert (tmp_path / "m-calibration" / "calibration_harmful.png").is_file()
    (tmp_path / "m-calibration" / "notes.txt").write_text("mine", encoding="utf-8")
    capsys.readouterr()
    assert main(["calibrate", model[0], str(negatives), *model[1:], *common]) == 0  # the calibration kept: no report
    said = capsys.readouterr().out
    assert sorted(path.name for path in (tmp_path / "m-calibration").iterdir()) == ["notes.txt"]
    assert f"{tmp_path / 'm-calibration'}: the report of an earlier calibration is removed" in said


def test_calibrate_unlabelled_on_posts_showing_none_of_a_class_takes_the_share_half_a_post_from_the_edge(
    demo_data, tmp_path: Path, capsys
) -> None:
    detector, _ = calibrated(demo_data, tmp_path, logit_shift=False)  # a model whose calibration records its prior
    detector.save(str(tmp_path / "model"))
    one = tmp_path / "one.jsonl"
    one.write_text(demo_data["validation"].read_text().splitlines()[0] + "\n")
    arguments = ["calibrate", tmp_path / "model", one, "--unlabelled", "--image-root", demo_data["validation"].parent,
                 "-o", tmp_path / "em"]  # fmt: skip
    assert main([str(argument) for argument in arguments]) == 0
    said = capsys.readouterr().out
    assert "0.500 estimated here (EM): the model's scores of these posts show none of one class" in said
    assert "here 1 post" in said and "taken half a post from 0 or 1" in said
    (task,) = json.loads((tmp_path / "em" / "faim.json").read_text())["tasks"]
    assert task["prior"] == 0.5 and abs(task["logit_shift"]) < 2  # not some 14 logits towards 0 or 1


@pytest.mark.parametrize("labels", [True, False])
def test_calibrate_refuses_a_model_scoring_posts_nan_naming_it_the_task_and_the_posts(
    labels: bool, demo_data, tmp_path: Path, capsys
) -> None:
    import torch

    detector, _ = calibrated(demo_data, tmp_path, logit_shift=False)  # a prior recorded, for --unlabelled
    with torch.no_grad():
        detector.model.heads["harmful"].net[-1].bias.fill_(float("nan"))
    detector.save(str(tmp_path / "model"))
    given = ["--map", "labels.harmful=label"] if labels else ["--unlabelled"]
    arguments = ["calibrate", tmp_path / "model", demo_data["validation"], "-o", tmp_path / "new", *given,
                 "--image-root", demo_data["validation"].parent]  # fmt: skip
    assert main([str(argument) for argument in arguments]) == 2
    said = capsys.readouterr().err
    scored = f"the model itself scored 160 of 160 posts of {demo_data['validation']} NaN or infinite for the task "
    assert f"{scored}'harmful' (the first: post id=" in said and not (tmp_path / "new").exists()


def test_calibrate_names_data_holding_no_post_before_the_model_is_loaded(
    tiny_model_dir: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "posts.csv"
    empty.write_text("id,text,label\n", encoding="utf-8")  # a header alone
    monkeypatch.setattr("faim.cli.calibrate_cmd.Detector.load", lambda path: pytest.fail("the model was loaded"))
    assert main(["calibrate", str(tiny_model_dir), str(empty), "-o", str(tmp_path / "new"), "--unlabelled"]) == 2
    assert f"faim calibrate: error: {empty}: holds no post" in capsys.readouterr().err


def test_calibrate_refuses_a_head_correction_the_model_cannot_hold_before_reading_a_post(
    demo_data, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import faim

    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"pool_by_image": 1.0}
    faim.build(recipe).save(str(tmp_path / "model"))
    monkeypatch.setattr("faim.cli.calibrate_cmd.read_posts", lambda *a, **k: pytest.fail("the posts were read"))
    arguments = ["calibrate", str(tmp_path / "model"), str(demo_data["validation"]), "-o", str(tmp_path / "new")]
    assert main([*arguments, "--head", "--map", "labels.harmful=label"]) == 2
    assert "a model that pools posts by picture cannot have its heads corrected" in capsys.readouterr().err


def test_calibrate_unlabelled_gives_the_shares_interval_and_warns_where_it_is_too_wide() -> None:
    few = prior_note("harmful", 0.25, 0.4, (0.1, 0.75), 10)
    assert few.startswith("harmful: share of positives 0.250 when calibrated, 0.400 estimated here (EM), 95% interval ")
    assert "0.100 to 0.750 over 10 posts: too wide to rely on" in few and "label a sample" in few
    assert prior_note("harmful", 0.25, 0.4, (0.37, 0.43), 2000).endswith("95% interval 0.370 to 0.430 over 2000 posts")


def test_calibrate_refuses_an_output_that_would_remove_the_users_files_and_draws_below_one(
    trained: Path, demo_data, tmp_path: Path
) -> None:
    before = sorted(p.relative_to(trained) for p in trained.rglob("*"))
    common = ["--map", "labels.harmful=label", "--image-root", demo_data["validation"].parent]
    around = faim("calibrate", trained / "model", demo_data["validation"], "-o", trained, *common)
    assert around.returncode == 2 and f"{trained}: exists and is not one faim wrote" in around.stderr
    inside = faim("calibrate", trained / "model", demo_data["validation"], "-o", trained / "model" / "new", *common)
    assert inside.returncode == 2 and "that is the model or a folder inside it" in inside.stderr
    assert sorted(p.relative_to(trained) for p in trained.rglob("*")) == before
    draws = faim("calibrate", trained / "model", demo_data["validation"], "-o", tmp_path / "x", "--draws", "0")
    assert draws.returncode == 2 and "expected a whole number of at least 1, got '0'" in draws.stderr


def test_calibrate_refuses_a_report_into_the_model_it_reads_before_the_model_is_loaded(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    before = sorted(path.name for path in tiny_model_dir.iterdir())
    arguments = ["calibrate", tiny_model_dir, demo_data["validation"], "-o", tmp_path / "x", "--report", tiny_model_dir]
    assert main([*map(str, arguments), "--map", "labels.harmful=label"]) == 2
    error = f"--report {tiny_model_dir}: that is the model or a folder inside it ({tiny_model_dir}); the report goes"
    assert error in capsys.readouterr().err
    assert sorted(path.name for path in tiny_model_dir.iterdir()) == before and not (tmp_path / "x").exists()


def test_calibrate_refuses_a_report_into_the_new_model_before_the_model_is_loaded(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    new = tmp_path / "new"
    for report in (new, new / "report"):
        arguments = ["calibrate", tiny_model_dir, demo_data["validation"], "-o", new, "--report", report]
        assert main([*map(str, arguments), "--map", "labels.harmful=label"]) == 2
        error = f"--report {report}: that is the new model, -o, or a folder inside it ({new}); the report goes"
        assert error in capsys.readouterr().err
    assert not new.exists()


def test_calibrate_refuses_a_report_into_the_data_or_by_default_into_the_model_before_the_model_is_loaded(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    # the report's calibration.json and written.json were read as posts of the folder by the next command given it
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    posts = tmp_path / "posts"
    posts.mkdir()
    shutil.copy(demo_data["validation"], posts / "validation.jsonl")
    arguments = ["calibrate", tiny_model_dir, posts, "-o", tmp_path / "new", "--report", posts]
    assert main([*map(str, arguments), "--map", "labels.harmful=label"]) == 2
    error = f"--report {posts}: that is the data, DATA, whose posts its files would join; the report goes elsewhere"
    assert error in capsys.readouterr().err
    # by default the report goes beside the new model, into NEW_MODEL-calibration: here the model read
    model = shutil.copytree(tiny_model_dir, tmp_path / "m-calibration")
    arguments = ["calibrate", model, demo_data["validation"], "-o", tmp_path / "m"]
    assert main([*map(str, arguments), "--map", "labels.harmful=label"]) == 2
    error = (
        f"the report's folder (NEW_MODEL-calibration; --report names another) {model}: that is the model or a folder "
        f"inside it ({model}); the report goes elsewhere"
    )
    assert error in capsys.readouterr().err
    assert sorted(posts.iterdir()) == [posts / "validation.jsonl"] and not (tmp_path / "m").exists()


def test_calibrate_into_the_working_directory_or_a_folder_named_through_dot_dot_names_the_new_model_first(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    # the report's folder was named from -o as written, . and x/.. having no name of their own: -calibration and
    # x/..-calibration, inside the new model, refused as such before -o was
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    common = ["--map", "labels.harmful=label", "--image-root", str(demo_data["validation"].parent)]
    assert main(["calibrate", str(tiny_model_dir), str(demo_data["validation"]), "-o", ".", *common]) == 2
    said = capsys.readouterr().err
    assert ".: is the working directory or holds it, which replacing it would remove from under this process" in said
    assert "-calibration" not in said
    new = tmp_path / "empty" / "gone" / ".."  # the folder empty, which is replaced
    (tmp_path / "empty").mkdir()
    assert main(["calibrate", str(tiny_model_dir), str(demo_data["validation"]), "-o", str(new), *common]) == 0
    assert (tmp_path / "empty" / "faim.json").is_file() and not (tmp_path / "empty" / "gone").exists()
    assert (tmp_path / "empty-calibration" / "calibration.json").is_file()


@pytest.mark.parametrize("command", ["eval", "calibrate"])
@pytest.mark.parametrize(
    ("mapping", "error"),
    [
        ("labels.harmfull=label", "--map labels.harmfull: the model has no task 'harmfull' (did you mean 'harmful'?); "
         "its tasks: harmful"),
        ("labels=label", "--map labels=label: the model has no task 'label'; its tasks: harmful; it reads columns "
         "named as their tasks: give one of another name as --map labels.TASK=COLUMN"),
    ],
)  # fmt: skip
def test_labels_mapped_to_a_task_the_model_lacks_or_mapped_wrongly_are_refused_before_the_model_is_loaded(
    command: str, mapping: str, error: str, tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    arguments = [command, tiny_model_dir, demo_data["validation"], "-o", tmp_path / "x"]
    assert main([*map(str, arguments), "--map", mapping]) == 2
    assert capsys.readouterr().err == f"faim {command}: error: {error}\n"
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["score", "model", "posts.jsonl", "-o"],
        ["embed", "model", "posts.jsonl", "-o"],
        ["eval", "model", "posts.jsonl", "-o"],
        ["explain", "model", "posts.jsonl", "-o"],
        ["export", "model", "-o"],
        ["calibrate", "model", "posts.jsonl", "-o"],
        ["calibrate", "model", "posts.jsonl", "-o", "new", "--report"],
        ["train", "recipe.yaml", "--output-dir"],
        ["demo", "--out"],
    ],
)
@pytest.mark.parametrize("inside", [False, True])
def test_an_output_folder_that_is_a_file_is_refused_by_name_before_any_work(
    command: list[str], inside: bool, tmp_path: Path, capsys
) -> None:
    single = tmp_path / "scores.parquet"
    single.write_text("x", encoding="utf-8")
    out = single / "run" if inside else single
    with pytest.raises(SystemExit) as exited:  # refused as the arguments are read: nothing named is read
        main([*command, str(out)])
    assert exited.value.code == 2
    assert f"{single}: is a file, not a folder" in capsys.readouterr().err
    assert single.read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("command", ["eval", "calibrate", "explain", "export"])
def test_an_export_given_for_a_saved_model_is_named_as_one(command: str, demo_data, tmp_path: Path, capsys) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "faim-export.json").write_text("{}", encoding="utf-8")
    posts = [] if command == "export" else [str(demo_data["validation"])]
    assert main([command, str(export), *posts, "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"faim {command}: error: {export}: an export written by faim export, not a saved model; this needs the saved "
        "model faim train wrote (with faim.json)\n"
    )


@pytest.mark.parametrize("command", ["score", "embed", "eval", "calibrate", "explain"])
def test_a_field_mapped_twice_is_refused_naming_it_before_the_model_is_loaded(
    command: str, tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    arguments = [command, tiny_model_dir, demo_data["validation"], "-o", tmp_path / "x"]
    assert main([*map(str, arguments), "--map", "text=text", "--map", "text=caption"]) == 2
    error = "--map text: given twice (text and caption); map it once"
    assert capsys.readouterr().err == f"faim {command}: error: {error}\n"
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("command", ["eval", "calibrate", "explain"])
@pytest.mark.parametrize("lines", ["", "\n\n"], ids=["empty", "blank_lines"])
def test_a_file_holding_no_post_is_refused_saying_so(
    command: str, lines: str, tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(lines, encoding="utf-8")
    arguments = [command, tiny_model_dir, empty, "--map", "labels.harmful=label", "-o", tmp_path / "x"]
    if command == "explain":
        arguments = arguments[:3] + arguments[5:]
    assert main(list(map(str, arguments))) == 2
    warning, error = capsys.readouterr().err.splitlines()
    assert warning.startswith(f"faim {command}: warning: {empty}: holds no row")  # as reading any file of none warns
    assert error == f"faim {command}: error: {empty}: holds no post"
    assert not (tmp_path / "x").exists()


def test_calibrate_without_labels_says_how_to_give_them_before_the_model_reads_a_post(
    trained: Path, demo_data, tmp_path: Path
) -> None:
    result = faim("calibrate", trained / "model", demo_data["validation"], "-o", tmp_path / "x")
    assert result.returncode == 2 and "--map labels.TASK=COLUMN" in result.stderr and "--unlabelled" in result.stderr
    assert "predicting" not in result.stderr  # refused before the model reads a post


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_eval_and_calibrate_name_a_post_holding_half_a_surrogate_pair_before_the_model_reads_a_post(
    command: str, trained: Path, demo_data, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text().splitlines()]
    rows[-1]["text"] = "an emoji cut in two \ud83d here"
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(json.dumps(row) + "\n" for row in rows))
    common = ["--map", "labels.harmful=label", "--image-root", demo_data["validation"].parent]
    result = faim(command, trained / "model", cut, *common, "-o", tmp_path / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    where = f"cut.jsonl:{len(rows)} (post id={rows[-1]['id']!r}) field 'text'"
    assert f"{where}: holds half of a UTF-16 surrogate pair (\\ud83d at character 21)" in result.stderr
    assert "evaluating" not in result.stderr and "predicting" not in result.stderr  # before the model reads a post


def test_without_the_torch_extra_help_lists_every_command_and_a_torch_command_says_what_to_install(
    tmp_path: Path,
) -> None:
    environment = without_packages(tmp_path / "blocker") | {"PYTHONWARNINGS": "ignore"}
    run = [sys.executable, "-m", "faim"]
    listing = subprocess.run([*run, "--help"], capture_output=True, text=True, env=environment, check=False)
    assert listing.returncode == 0, listing.stderr
    for command in ("train", "eval", "score", "export", "explain"):
        assert command in listing.stdout
    assert "(needs torch, not installed: pip install 'faim-sdk[torch]')" in listing.stdout

    train = subprocess.run([*run, "train", "recipe.yaml"], capture_output=True, text=True, env=environment, check=False)
    assert train.returncode == 2
    assert "faim train: error: needs the Python package 'torch', not installed" in train.stderr
    assert "pip install 'faim-sdk[torch]'" in train.stderr
    assert "Traceback" not in train.stderr
    train_help = subprocess.run([*run, "train", "--help"], capture_output=True, text=True, env=environment, check=False)
    assert (train_help.returncode, train_help.stderr) == (train.returncode, train.stderr)

    score = subprocess.run([*run, "score", "--help"], capture_output=True, text=True, env=environment, check=False)
    assert score.returncode == 0, score.stderr
    assert "--runtime" in score.stdout


@pytest.mark.parametrize(
    ("temperature", "said"),
    [
        (0.05, "(at the lower edge of the range 0.05–20 the fit searches: the model's scores separate these labels"),
        (20.0, "(at the upper edge of the range 0.05–20 the fit searches: the model's scores barely tell these"),
        (1.5, "refitted temperature 1.500, no logit shift"),
    ],
)
def test_calibrate_says_which_edge_of_its_search_a_temperature_lies_at(temperature: float, said: str) -> None:
    task = TaskSpec("harmful", "binary", ("benign", "harmful"))
    calibration = Calibration.identity([task])
    calibration.temperatures["harmful"] = temperature
    line = fitted(task, calibration, EvalConfig())
    assert said in line and line.count("edge") == (temperature != 1.5)


def test_faim_demo_names_the_faim_train_command_that_resumes_its_run(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    import faim.cli.demo_cmd

    hints = []
    monkeypatch.setattr(faim.cli.demo_cmd, "train_recipe", lambda recipe, resume_hint: hints.append(resume_hint))
    assert main(["demo", "--out", str(tmp_path / "demo"), "--set", "train.seed=3"]) == 0
    words = shlex.split(hints[0].strip("`"))
    assert words[:3] == ["faim", "train", "demo_multimodal"] and words[-1] == "--resume"
    assert f"train.output_dir={tmp_path / 'demo' / 'run'}" in words and "train.seed=3" in words
    assert f"data.train={tmp_path / 'demo' / 'data' / 'train.jsonl'}" in words


def test_the_command_that_resumes_a_run_is_quoted_for_the_systems_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("faim.wording.os", SimpleNamespace(name="nt"))  # cmd.exe keeps single quotes in the word
    hint = resume_command("hate.yaml", [r"train.output_dir=C:\my runs\hate"], r"C:\my runs")
    assert hint == r'`faim train hate.yaml --set "train.output_dir=C:\my runs\hate" --output-dir "C:\my runs" --resume`'


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_the_ray_engine_without_ray_installed_is_one_line_saying_what_to_install(
    runtime: str, tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    for name in ("ray", "ray.data"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed: importing it raises
    arguments = [tiny_model_dir, demo_data["validation"], "-o", tmp_path / "out", "--runtime", runtime]
    assert main(["score", *map(str, arguments), "--engine", "ray", "--workers", "1"]) == 2
    assert capsys.readouterr().err == "faim score: error: --engine ray needs Ray Data: pip install 'faim-sdk[ray]'\n"
    assert not (tmp_path / "out").exists()  # refused before the model is exported for the run, or a row is read


def test_an_import_error_faim_does_not_raise_with_an_install_hint_is_not_taken_for_one(monkeypatch) -> None:
    def broken(args: object) -> int:
        raise ImportError("cannot import name 'x' from 'somewhere'")

    monkeypatch.setattr("faim.cli.recipe_cmd.run_list", broken)
    with pytest.raises(ImportError, match="cannot import name 'x'"):
        main(["recipe", "list"])


def write_posts(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_posts_holding_nothing_the_model_reads_are_refused_when_all_are_and_left_out_when_some_are(
    command: str, tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    unmapped = [{"id": str(n), "tweet": f"post {n}", "label": n % 2} for n in range(40)]  # text under another name
    data = write_posts(tmp_path / "unmapped.jsonl", unmapped)
    arguments = [command, str(tiny_model_dir), str(data), "-o", str(tmp_path / "x"), "--map", "labels.harmful=label"]
    assert main(arguments) == 2
    said = f"{data}: no post holds anything the model reads (comments, image, text); map the columns that hold them"
    assert said in capsys.readouterr().err
    assert main([*arguments, "--map", "text=tweet"]) == 0
    some = write_posts(tmp_path / "some.jsonl", [*unmapped[:39], {"id": "blank", "text": " ", "label": 1}])
    arguments[2] = str(some)
    assert main([*arguments, "--map", "text=tweet", "-o", str(tmp_path / "y")]) == 0
    said = f"faim {command}: warning: {some}: 1 of 40 posts hold nothing the model reads (comments, image, text) and"
    assert said in capsys.readouterr().err


def test_eval_refuses_a_split_given_with_a_file(tiny_model_dir: Path, demo_data, tmp_path: Path, capsys) -> None:
    arguments = ["eval", str(tiny_model_dir), str(demo_data["validation"]), "--split", "train"]
    assert main([*arguments, "-o", str(tmp_path / "x")]) == 2
    assert "--split names a split of the model's recipe" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_a_kind_the_model_reads_that_no_post_holds_is_warned_of_naming_how_to_map_it(
    command: str, tiny_model_dir: Path, demo_data, tmp_path: Path, capsys
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()]
    data = write_posts(tmp_path / "img.jsonl", [{"img": row.pop("image"), **row} for row in rows])
    arguments = [command, str(tiny_model_dir), str(data), "-o", str(tmp_path / "x"), "--map", "labels.harmful=label"]
    assert main(arguments) == 0
    said = (
        f"faim {command}: warning: {data}: no post holds any image, which the model reads: each is read without one, "
        "as where the column holding them is not mapped; map the column that holds them with --map image=COLUMN "
        "(columns of the data no mapping reads: img"
    )
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_pictures_not_there_are_refused_naming_the_rows_before_the_model_reads_a_post(
    command: str, tiny_model_dir: Path, demo_data, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()]
    data = write_posts(tmp_path / "moved.jsonl", rows)  # its pictures stay beside the demo's file
    monkeypatch.setattr("faim.detector.Detector.collator", lambda *args, **kwargs: pytest.fail("the model read posts"))
    arguments = [command, str(tiny_model_dir), str(data), "-o", str(tmp_path / "x"), "--map", "labels.harmful=label"]
    arguments += ["--map", "meta=topic"]  # the column the model's recipe slices by: its error is all that is said
    assert main(arguments) == 2
    error = capsys.readouterr().err
    said = f"faim {command}: error: {data}: {len(rows)} of {len(rows)} posts name a picture that is not there"
    assert error.startswith(said) and f"{data}:1 (post id='{rows[0]['id']}') field 'images': image " in error
    assert f"; and {len(rows) - 5} more; mend the paths or the folder they resolve against" in error
    monkeypatch.undo()
    assert main([*arguments, "--image-root", str(demo_data["validation"].parent)]) == 0


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_metadata_holding_none_of_the_fields_the_model_reads_is_warned_of_naming_how_to_map_them(
    command: str, exported, tmp_path: Path, capsys
) -> None:
    rows = [{"id": str(i), "text": f"post {i}", "meta": {"like_count": i}, "harm": i % 2} for i in range(20)]
    data = write_posts(tmp_path / "posts.jsonl", rows)
    arguments = [command, str(exported[0]), str(data), "-o", str(tmp_path / "x"), "--map", "labels.harm=harm"]
    arguments += ["--sizes=10", "--draws=2"] if command == "calibrate" else []
    assert main(arguments) == 0
    assert (
        f"faim {command}: warning: {data}: no post's metadata holds any field the model reads (likes, shares), only "
        "like_count: each post is read with them missing; give each under the name the model reads: a column so "
        "named, with --map meta=likes (in Python, any column: columns: {meta: {likes: COLUMN}}), or a field so named "
        "in each post's meta object"
    ) in capsys.readouterr().err
    renamed = [{key: value for key, value in row.items() if key != "meta"} | {"likes": i} for i, row in enumerate(rows)]
    write_posts(data, renamed)  # the remedy given: a column so named, mapped
    assert main([*arguments, "--map", "meta=likes"]) == 0
    assert "metadata holds" not in capsys.readouterr().err


@pytest.mark.parametrize("command", [["score"], ["score", "--runtime", "onnx"], ["eval"], ["calibrate"]], ids=" ".join)
def test_posts_holding_more_comments_than_the_model_reads_are_warned_of_once(
    command: list[str], tiny_model_dir: Path, demo_data, tmp_path: Path, capsys
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()][:40]
    for row, count in zip(rows, [11, 9, 8]):
        row["comments"] = ["ok"] * count
    data = write_posts(demo_data["validation"].parent / f"crowded-{'-'.join(command)}.jsonl", rows)
    arguments = [*command, str(tiny_model_dir), str(data), "-o", str(tmp_path / "x")]
    assert main([*arguments, *(["--map", "labels.harmful=label"] if command[0] != "score" else [])]) == 0
    name = f"{data} (its 40 rows, scored)" if command[0] == "score" else str(data)
    said = (
        f"faim {command[0]}: warning: {name}: 2 posts hold more pictures or comments than the model reads of a post "
        "(up to 11): it reads the first 8 of each alone (the recipe's train.max_elements: 8), the rest unread; a model "
        "trained with a larger train.max_elements reads more\n"
    )
    assert capsys.readouterr().err.count(said) == 1


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_pictures_a_model_embeds_but_does_not_fuse_are_not_warned_of_as_more_than_it_reads(
    command: str, demo_data, tmp_path: Path, capsys
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["fusion"] = {"type": "concat", "kinds": ["text"]}
    Detector.from_recipe(as_recipe(recipe)).save(tmp_path / "model", recipe)
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()][:20]
    rows[0]["images"] = [rows[0].pop("image")] * 12  # a model fusing them reads the first 8
    data = write_posts(demo_data["validation"].parent / f"unfused-{command}.jsonl", rows)
    arguments = [command, str(tmp_path / "model"), str(data), "--map", "labels.harmful=label"]
    assert main([*arguments, "-o", str(tmp_path / "out")]) == 0
    assert "more pictures" not in capsys.readouterr().err
