"""The ``faim`` entry point: the listing of commands and each command's help."""

from __future__ import annotations

import argparse
import importlib.util
import json
import signal
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from import_graph import ROOT
from packaging.requirements import Requirement

from faim.cli.main import COMMANDS, EXTRA_OF, SIGTERM_STATUS, build_parser, main, run
from faim.folders import replacing

tomllib = pytest.importorskip("tomllib")

HEAVY = ("torch", "transformers", "pytorch_lightning", "lightning", "sklearn", "matplotlib", "scipy", "timm")
"""What the training stack brings, which takes seconds to import: no help needs it."""

SCORING = ("numpy", "PIL", "onnxruntime", "tokenizers", "pyarrow")
"""What scoring brings (a third of a second): no help needs it either."""

HELP = f"""
import contextlib, io, json, sys
from faim.cli.main import main

found = {{}}
for command in [[]] + [[name] for name in {list(COMMANDS)!r}]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([*command, "--help"])
        except SystemExit as exit:
            code = exit.code
    heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {set(HEAVY + SCORING)!r})
    found[" ".join(command) or "(none)"] = [code, out.getvalue().splitlines()[0], heavy]
print(json.dumps(found))
"""


def test_help_of_faim_and_of_every_command_imports_none_of_the_training_stack_nor_of_scoring() -> None:
    """Each command's help, read in the same process one after the other (a module an earlier one imported stays,
    so the first command whose help imports one is the one named)."""
    result = subprocess.run([sys.executable, "-c", HELP], capture_output=True, text=True, check=True, timeout=600)
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["(none)"][:2] == [0, "usage: faim [-h] [--version] COMMAND ..."]
    for command in COMMANDS:
        code, usage, heavy = found[command]
        assert code == 0 and usage.startswith(f"usage: faim {command} "), (command, usage)
    assert {command: heavy for command, (_, _, heavy) in found.items() if heavy} == {}


def test_the_readme_names_the_file_of_every_command_whose_arguments_are_not_in_its_own_command_args_file() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "only each command's arguments, `faim/cli/COMMAND_args.py`" in readme
    for name, command in COMMANDS.items():
        file = command.arguments.rpartition(".")[2] + ".py"
        assert file == f"{name}_args.py" or f"`faim {name}`'s in `{file}`" in readme, (name, file)


def without(monkeypatch: pytest.MonkeyPatch, *missing: str) -> None:
    """Make ``find_spec`` report the top-level packages ``missing`` as not installed (nothing is imported)."""
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name in missing else find_spec(name))


def listed(name: str) -> list[str]:
    """The words of the line of ``faim --help`` that lists the command ``name``."""
    return next(line for line in build_parser().format_help().splitlines() if line.split()[:1] == [name]).split()


@pytest.mark.parametrize(
    ("missing", "command", "extra", "unaffected"),
    [
        ("pytorch_lightning", "train", "torch", "eval"),
        ("sklearn", "eval", "torch", "recipe"),
        ("onnxruntime", "export", "runtime", "score"),
    ],
)
def test_a_command_whose_package_is_missing_names_it_and_the_extra_that_installs_it(
    missing: str, command: str, extra: str, unaffected: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    without(monkeypatch, missing)
    monkeypatch.setenv("COLUMNS", "200")  # one line per command in the listing
    install = f"pip install 'faim-sdk[{extra}]'"
    assert " ".join(listed(command)) == f"{command} (needs {missing}, not installed: {install})"
    assert "(needs" not in listed(unaffected)
    assert main([command, "a", "b", "-o", "out"]) == 2
    error = capsys.readouterr().err
    assert error == f"faim {command}: error: needs the Python package {missing!r}, not installed: {install}\n"


@pytest.mark.parametrize(("missing", "extra"), [("tokenizers", "runtime"), ("transformers", "torch")])
def test_a_package_found_missing_as_a_command_runs_is_named_with_the_extra_that_installs_it(
    missing: str, extra: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    def run(args, stop_on_sigterm: bool = False) -> int:
        raise ModuleNotFoundError(f"No module named {missing!r}", name=missing)

    monkeypatch.setattr("faim.cli.main.run", run)
    assert main(["score", "model", "dump.jsonl", "-o", "out"]) == 2
    install = f"pip install 'faim-sdk[{extra}]'"
    assert (
        capsys.readouterr().err
        == f"faim score: error: needs the Python package {missing!r}, not installed: {install}\n"
    )


def test_each_package_a_command_needs_is_installed_by_the_extra_named_for_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    distributions = packages_distributions()
    assert {package for command in COMMANDS.values() for package in command.needs} <= set(EXTRA_OF)
    for package in EXTRA_OF:
        declared = {Requirement(r).name.lower() for r in project["optional-dependencies"][EXTRA_OF[package]]}
        assert {d.lower() for d in distributions[package]} & declared, package


@pytest.mark.parametrize(
    ("kept", "said"), [((), "faim: interrupted\n"), (("3 rows kept",), "faim: interrupted: 3 rows kept\n")]
)
def test_a_command_stopped_with_ctrl_c_says_so_and_what_its_stopped_work_says_it_keeps(
    kept: tuple[str, ...], said: str, capsys
) -> None:
    def stopped(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt(*kept)

    assert run(argparse.Namespace(command="score", handler=stopped)) == 130
    assert capsys.readouterr().err == said


@pytest.mark.parametrize("command", ["score", "embed", "eval", "calibrate", "export", "explain"])
def test_sigterm_stops_a_command_as_ctrl_c_does_saying_so_with_its_status(command: str, capsys) -> None:
    def terminated(args: argparse.Namespace) -> int:
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # what SIGTERM runs; the default, outside a scoring run
        return 0

    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    assert run(argparse.Namespace(command=command, handler=terminated), stop_on_sigterm=True) == SIGTERM_STATUS
    assert capsys.readouterr().err == "faim: stopped by SIGTERM\n"
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # set back once the command ends


def test_sigterm_stopping_a_command_writing_a_folder_leaves_it_as_it_was_saying_so(tmp_path: Path, capsys) -> None:
    out = tmp_path / "export"

    def terminated(args: argparse.Namespace) -> int:
        with replacing(out, ".faim-export-") as staging:
            (staging / "graph.onnx").write_bytes(b"part of a graph")
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # what SIGTERM runs as the new folder is written
        return 0

    assert run(argparse.Namespace(command="export", handler=terminated), stop_on_sigterm=True) == SIGTERM_STATUS
    assert capsys.readouterr().err == f"faim: stopped by SIGTERM: nothing was written: {out} is left as it was\n"
    assert list(tmp_path.iterdir()) == []  # no folder written in part beside it


def test_sigterm_is_left_to_a_handler_set_before_and_to_commands_that_take_it_themselves() -> None:
    seen = []

    def handled(args: argparse.Namespace) -> int:
        seen.append(signal.getsignal(signal.SIGTERM))
        return 0

    def own(signum: int, frame: object) -> None:
        pass

    assert run(argparse.Namespace(command="train", handler=handled), stop_on_sigterm=True) == 0  # Lightning's
    assert run(argparse.Namespace(command="score", handler=handled)) == 0  # an application's main: its SIGTERM
    previous = signal.signal(signal.SIGTERM, own)  # an application's, running faim's command line
    try:
        assert run(argparse.Namespace(command="score", handler=handled), stop_on_sigterm=True) == 0
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [signal.SIG_DFL, signal.SIG_DFL, own]
