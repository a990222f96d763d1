"""`faim score` hands its speed-up options to the engine and refuses bad counts and conflicting options up front."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import faim.scoring.engine
from faim.cli.main import main
from faim.scoring.options import ScoringOptions


@pytest.fixture
def engine_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of each call `faim score` makes to the torch engine (which scores nothing here)."""
    calls: list[dict[str, Any]] = []

    class Summary:
        def format(self) -> str:
            return "scored"

    def record(model: str, dump: str, out: str, **kwargs: Any) -> Summary:
        calls.append(kwargs)
        return Summary()

    monkeypatch.setattr(faim.scoring.engine, "score_dump", record)
    return calls


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        ([], ScoringOptions()),
        (["--bf16"], ScoringOptions(bf16=True)),
        (["--exact"], ScoringOptions.exact()),
        (["--exact", "--compile"], ScoringOptions(**(ScoringOptions.exact().to_dict() | {"compile": True}))),
    ],
)
def test_bf16_is_used_only_when_asked_for(flags: list[str], options: ScoringOptions, engine_calls, tmp_path) -> None:
    assert main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), *flags]) == 0
    assert engine_calls[0]["options"] == options
    assert not ScoringOptions().bf16


def test_exact_and_bf16_together_are_refused(engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), "--exact", "--bf16"]) == 2
    assert "--exact and --bf16: choose one" in capsys.readouterr().err and not engine_calls


@pytest.mark.parametrize("option", ["--batch-size", "--shard-rows", "--workers"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_count_below_one_is_refused_naming_its_option(
    option: str, value: str, engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), option, value])
    assert exit_.value.code == 2 and not engine_calls
    assert f"argument {option}: expected a whole number of at least 1, got '{value}'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "embed"])
def test_an_export_without_the_onnx_runtime_is_refused_saying_to_add_it(
    command: str, engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "faim-export.json").write_text("{}", encoding="utf-8")
    assert main([command, str(export), "dump.jsonl", "-o", str(tmp_path / "out")]) == 2
    error = f"faim {command}: error: {export}: an export written by faim export; read it with --runtime onnx\n"
    assert capsys.readouterr().err == error and not engine_calls
