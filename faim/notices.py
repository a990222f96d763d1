"""``FaimWarning``, the class of every warning faim gives, and ``warn``, which gives them: the ``faim`` command prints
one as a line of its own, ``faim COMMAND: warning: MESSAGE``, as it prints its errors, and a warning of another
package as Python does; and ``MissingExtra``, the error of a feature whose optional package is not installed, which it
prints as one line too."""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")


class FaimWarning(UserWarning):
    """Something faim tells its user of and goes on: a plug-in that failed to load, a setting it had to bend, a
    report missing a part. A filter silences faim's warnings by this category (``faim.FaimWarning``), not by
    module: each names the module of the line that called faim (``warn``), not faim's."""


class MissingExtra(ImportError):
    """An optional package a feature asked for needs (Ray Data for ``--engine ray``, Hugging Face datasets for a
    dataset file) is not installed; the message names the feature and the ``pip install`` of its extra."""


def warn(message: str, category: type[FaimWarning] = FaimWarning) -> None:
    """Warn of ``message`` (``warnings.warn_explicit``) as given on the line that called into faim (``caller``), as
    transformers and Lightning name their user's line: the warning names that file and line, Python's filters read
    that module (``warnings.filterwarnings(..., module=...)``) and say it once for each line where they say a warning
    once, however deep in faim (or in a library faim called back from, as Lightning calls a training run's hooks)
    it was given."""
    filename, line, module, registry = getattr(STARTED, "where", None) or where(caller(sys._getframe(1)))
    # as warnings.warn gives it: the line shown is read from the file, not through the module's loader
    warnings.warn_explicit(message, category, filename, line, module, registry)


Where = tuple[str, int, Any, dict[Any, Any]]
"""A line as a warning names it: its file, its number, its module's name and the module's registry of warnings given
(``__warningregistry__``)."""

STARTED = threading.local()
"""The line (``Where``) a thread faim runs work in (``in_thread``) names in its warnings, while it runs that work."""


def where(frame: FrameType) -> Where:
    """The line ``frame`` is at, as a warning names it (``Where``)."""
    module, registry = frame.f_globals.get("__name__"), frame.f_globals.setdefault("__warningregistry__", {})
    return frame.f_code.co_filename, frame.f_lineno, module, registry


def in_thread(function: Callable[..., T]) -> Callable[..., T]:
    """``function``, to be run in a thread faim starts (a scoring run's), warning (``warn``) as given on the line that
    called into faim where ``in_thread`` is called, in the thread calling it: a frame of the thread that runs it has no
    caller of the user's to name, its outermost frames being Python's ``threading``'s, which no filter of the user's
    module reads."""
    started = where(caller(sys._getframe(1)))

    def run(*args: Any, **kwargs: Any) -> T:
        outer = getattr(STARTED, "where", None)
        STARTED.where = started
        try:
            return function(*args, **kwargs)
        finally:
            STARTED.where = outer

    return run


def caller(frame: FrameType) -> FrameType:
    """The frame that called the outermost of faim's frames (those of the modules ``faim`` and ``faim.*``) from
    ``frame`` out, past the frames of Python's import machinery, as ``warnings.warn`` passes them (a module of faim
    imported by the caller); the outermost itself where nothing called it (a process faim started)."""
    outermost = frame
    while frame is not None:
        if in_faim(frame):
            outermost = frame
        frame = frame.f_back
    called = outermost.f_back
    while called is not None and importing(called):
        called = called.f_back
    return called or outermost


def importing(frame: FrameType) -> bool:
    """Whether ``frame`` runs Python's import machinery (``importlib._bootstrap``, ``_bootstrap_external``)."""
    filename = frame.f_code.co_filename
    return "importlib" in filename and "_bootstrap" in filename


def in_faim(frame: FrameType) -> bool:
    """Whether ``frame`` runs code of a module of faim's (``faim`` or ``faim.*``: faim.encoders and the others
    included, wherever their files are)."""
    name = frame.f_globals.get("__name__", "")
    return name == "faim" or name.startswith("faim.")
