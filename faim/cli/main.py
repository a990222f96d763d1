"""The ``faim`` command line: train, eval, calibrate, score, embed, export, explain, recipe, cache, demo."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from types import FrameType
from typing import NamedTuple, TextIO

from faim.notices import FaimWarning, MissingExtra
from faim.version import __version__

EPILOG = """examples:
  faim demo                                   generate data, train, evaluate and score, end to end
  faim recipe list                            shipped recipes and registered components
  faim train recipes/hate_text_frozen.yaml --set train.max_epochs=3
  faim eval runs/hate/model data.jsonl --map text=tweet --map labels.hate=label
  faim calibrate runs/hate/model ours.jsonl --map labels.hate=label -o runs/hate/model-ours
  faim score runs/hate/model dump.parquet -o scores/  a folder of Parquet parts, read as one table
  faim export runs/hate/model -o exports/hate  ONNX graphs that faim.runtime scores without torch
  faim explain runs/hate/model posts.jsonl -o why/   element shares, token and picture attributions, index.html
  faim cache prune --older-than 30             remove cached embeddings of encoders not used in 30 days
"""


class Command(NamedTuple):
    """Where a command's arguments are defined, and the packages it cannot run without.

    Attributes:
        arguments: The module whose ``add_parser`` defines the command's arguments; it imports nothing heavy (the
            handler it sets imports what running needs when the command runs), so that ``faim --help`` and
            ``faim COMMAND --help`` answer at once.
        needs: The top-level packages the command needs (each in ``EXTRA_OF``), looked for (not imported) before its
            arguments are read; empty where the base install runs it.
    """

    arguments: str
    needs: tuple[str, ...] = ()


TRAINING = ("torch", "pytorch_lightning", "sklearn", "matplotlib")
"""What training needs: torch, Lightning, and scikit-learn and matplotlib for the evaluation that ends a run."""

EVALUATION = ("torch", "sklearn", "matplotlib")
"""What evaluating and calibrating a saved model need: torch, and scikit-learn and matplotlib for metrics and plots."""

COMMANDS = {
    "train": Command("faim.cli.train_args", TRAINING),
    "eval": Command("faim.cli.eval_args", EVALUATION),
    "calibrate": Command("faim.cli.calibrate_args", EVALUATION),
    "score": Command("faim.cli.score_args"),
    "embed": Command("faim.cli.score_args"),
    "export": Command("faim.cli.export_args", ("torch", "onnx", "onnxruntime")),
    "explain": Command("faim.cli.explain_args", ("torch", "captum")),
    "recipe": Command("faim.cli.recipe_args", ("torch",)),
    "cache": Command("faim.cli.cache_cmd"),
    "demo": Command("faim.cli.demo_args", TRAINING),
}
"""Each command and where its arguments are defined. What a command runs is imported only when it runs:
``faim score --runtime onnx`` then starts without the training stack, torch included. ``faim score`` and
``faim embed`` need torch (``--runtime torch``) or onnxruntime (``--runtime onnx``), not both, so neither is looked for
up front: the runtime chosen names the one it lacks as it is imported."""

EXTRA_OF = {
    "torch": "torch",
    "torchvision": "torch",
    "transformers": "torch",
    "timm": "torch",
    "pytorch_lightning": "torch",
    "torchmetrics": "torch",
    "safetensors": "torch",
    "sklearn": "torch",
    "scipy": "torch",
    "matplotlib": "torch",
    "onnx": "torch",
    "onnxscript": "torch",
    "onnx_ir": "torch",
    "captum": "torch",
    "onnxruntime": "runtime",
    "tokenizers": "runtime",
}
"""The extra of faim-sdk that installs each package a command needs or may import as it runs: the ``runtime`` extra
for onnxruntime and tokenizers, which scoring an export needs alone (the ``torch`` extra brings them too)."""

EXTRAS = (
    "`pip install 'faim-sdk[torch]'` installs what training, evaluation, export, explanations and torch scoring "
    "need; `faim score --runtime onnx` needs only `pip install 'faim-sdk[runtime]'`"
)


def install_hint(package: str) -> str:
    """What to run to install ``package``: the extra ``EXTRA_OF`` names, or, for a package it does not, ``EXTRAS``."""
    extra = EXTRA_OF.get(package)
    return f"pip install 'faim-sdk[{extra}]'" if extra else EXTRAS


def missing_package(error: ModuleNotFoundError) -> str | None:
    """The third-party package whose absence raised ``error``; ``None`` when a module of faim itself is missing
    (a broken install, not an extra left out)."""
    name = (error.name or "").split(".")[0]
    return None if name in ("", "faim") else name


def check_installed(packages: tuple[str, ...]) -> None:
    """Raise, as importing it would, naming the first of the top-level ``packages`` that is not installed, without
    importing any.

    Raises:
        ModuleNotFoundError: Naming the package.
    """
    for package in packages:
        if importlib.util.find_spec(package) is None:
            raise ModuleNotFoundError(f"No module named {package!r}", name=package)


def add_unavailable(sub: argparse._SubParsersAction, name: str, package: str) -> None:
    """List ``name`` in ``faim --help`` although ``package``, which it needs, is not installed, saying so."""
    sub.add_parser(name, help=f"(needs {package}, not installed: {install_hint(package)})")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or ``command``'s alone.

    Raises:
        ModuleNotFoundError: When ``command`` needs a package this install lacks (the whole listing, ``command``
            ``None``, names such commands instead).
    """
    parser = argparse.ArgumentParser(
        prog="faim",
        description="faim: whole-post integrity models from pluggable encoders, fusion and task heads.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"faim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (arguments, needs) in COMMANDS.items():
        if command in (None, name):
            try:
                check_installed(needs)
                importlib.import_module(arguments).add_parser(sub, name)
            except ModuleNotFoundError as error:
                package = missing_package(error)
                if command is not None or package is None:
                    raise
                add_unavailable(sub, name, package)
    return parser


def main(argv: Sequence[str] | None = None, stop_on_sigterm: bool = False) -> int:
    """Run the command line ``argv`` (the process's arguments where ``None``); returns the exit status. With
    ``stop_on_sigterm`` (the ``faim`` script's, ``script``), SIGTERM stops the commands of ``STOPPED_BY_SIGTERM`` as
    Ctrl-C does; an application calling it keeps SIGTERM as it set it."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((word for word in argv if not word.startswith("-")), None)
    try:
        args = build_parser(command if command in COMMANDS else None).parse_args(argv)
        return run(args, stop_on_sigterm)
    except ModuleNotFoundError as error:
        package = missing_package(error)
        if package is None:
            raise
        hint = install_hint(package)
        print(f"faim {command}: error: needs the Python package {package!r}, not installed: {hint}", file=sys.stderr)
        return 2


def command_warnings(command: str) -> Callable[..., None]:
    """``warnings.showwarning`` for the ``faim COMMAND`` process: a warning faim gives (a ``FaimWarning``) is one
    line, ``faim COMMAND: warning: MESSAGE``, as its errors are; another package's is shown as Python shows it."""
    python_shows = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:  # fmt: skip
        if not issubclass(category, FaimWarning):
            python_shows(message, category, filename, lineno, file, line)
            return
        print(f"faim {command}: warning: {message}", file=file or sys.stderr)

    return show


STOPPED_BY_SIGTERM = frozenset({"score", "embed", "eval", "calibrate", "export", "explain"})
"""The commands SIGTERM stops as Ctrl-C does (``sigterm_stops``): a job scheduler (Kubernetes evicting a pod,
systemd, Slurm, ``timeout``) ending ``faim score`` then has its workers ended and its parts kept, and the run says
what it keeps and that the same command scores the rest, where it ended silently, its workers killed mid-shard; one
ending ``faim export``, ``faim explain`` or ``faim calibrate`` has the folder it was writing left as it was (or whole)
and said so, where it left the new folder in part beside it, and ``faim eval`` says it was stopped, where each ended
silently. ``faim train`` stops on SIGTERM itself, saying what resumes it."""


@contextmanager
def sigterm_stops(received: list[int]) -> Iterator[None]:
    """SIGTERM raising ``KeyboardInterrupt`` while the block runs, as Ctrl-C does, and noted in ``received``; the
    handler before is set back after. Left alone outside the main thread, which alone can set one, and where SIGTERM
    has a handler of its own (an application running ``faim.cli.main.main``) or is ignored. Processes the block
    starts by ``spawn`` (the scoring workers) start with SIGTERM's default, as exec sets it."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


SIGTERM_STATUS = 128 + signal.SIGTERM
"""The status ``run`` returns for a command SIGTERM stopped (143), as a shell gives a process SIGTERM killed."""


def run(args: argparse.Namespace, stop_on_sigterm: bool = False) -> int:
    """Run a parsed command; bad input, or a feature asked for whose optional package is missing (``MissingExtra``),
    is one line on stderr and exit status 2, a warning faim gives one line. A command stopped by Ctrl-C, or with
    ``stop_on_sigterm`` by SIGTERM where it takes it so (``STOPPED_BY_SIGTERM``), says so and what its stopped work
    keeps, with the status a shell gives the signal (130, ``SIGTERM_STATUS``)."""
    received: list[int] = []
    stops = stop_on_sigterm and args.command in STOPPED_BY_SIGTERM
    sigterm = sigterm_stops(received) if stops else nullcontext()
    try:
        with warnings.catch_warnings(), sigterm:
            warnings.showwarning = command_warnings(args.command)
            return int(args.handler(args) or 0)
    except KeyboardInterrupt as error:  # its message, where one is given, says what the stopped work keeps
        stopped = "stopped by SIGTERM" if received else "interrupted"
        print(f"faim: {stopped}{f': {error}' if error.args else ''}", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    except (ValueError, KeyError, OSError, MissingExtra) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"faim {args.command}: error: {message}", file=sys.stderr)
        return 2


def script() -> None:
    """The ``faim`` script and ``python -m faim``: ``main`` of the process's arguments, SIGTERM stopping the commands
    of ``STOPPED_BY_SIGTERM`` as Ctrl-C does; a command so stopped then ends the process by SIGTERM, as one SIGTERM
    kills does, so that systemd, a job scheduler or a parent process reads it stopped, not failed with status 143."""
    status = main(stop_on_sigterm=True)
    if status == SIGTERM_STATUS:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit(status)


if __name__ == "__main__":
    script()
