from __future__ import annotations

import importlib.util
import inspect
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

import faim
from faim import Detector, WholePostModel
from faim.data.targets import TaskSpec
from faim.encoders.tiny_image import TinyImageEncoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.fusion import ConcatFusion
from faim.notices import FaimWarning, in_thread, warn
from faim.tasks import BinaryHead


def picture_detector() -> Detector:
    torch.manual_seed(0)
    encoders = {"text": TinyTextEncoder(dim=8), "image": TinyImageEncoder(dim=8)}
    model = WholePostModel(encoders, ConcatFusion({"text": 8, "image": 8}), {"hate": BinaryHead(16)})
    return Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])


def test_a_warning_of_the_python_api_names_the_callers_line_and_module() -> None:
    detector = picture_detector()
    posts = [{"id": "a", "text": "a post"}]  # no picture, which the model reads
    for call in (detector.score, detector.embed, detector.predict, detector.explain):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            line = inspect.currentframe().f_lineno + 1
            call(posts)
        assert [(warning.filename, warning.lineno) for warning in said] == [(__file__, line)], call.__name__
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", category=FaimWarning, module=__name__)
            call(posts)  # silenced by this module's filter


def faim_function(source: str, name: str) -> Callable:
    """A function compiled as one of faim's modules (named ``faim.…``) defines it."""
    namespace = {"__name__": "faim.given", "warn": warn, "in_thread": in_thread}
    exec(compile(source, "<faim.given>", "exec"), namespace)
    return namespace[name]


def test_a_warning_given_where_a_library_called_back_into_faim_names_the_line_that_called_faim() -> None:
    warner = faim_function("def warner():\n    warn('called back')\n", "warner")
    calling = faim_function("def calling(library):\n    return library()\n", "calling")
    with pytest.warns(FaimWarning, match="^called back$") as said:
        line = inspect.currentframe().f_lineno + 1
        calling(lambda: warner())  # faim calls a library (this lambda) calling faim back, as Lightning does
    assert [(warning.filename, warning.lineno) for warning in said] == [(__file__, line)]


def test_a_warning_given_in_a_thread_faim_runs_work_in_names_the_line_that_called_faim_there() -> None:
    warner = faim_function("def warner():\n    warn('in a thread')\n", "warner")
    source = "def starting(executor):\n    return executor.submit(in_thread(warner)).result()\n"
    starting = faim_function(source, "starting")
    starting.__globals__["warner"] = warner
    with ThreadPoolExecutor(1) as executor, pytest.warns(FaimWarning, match="^in a thread$") as said:
        line = inspect.currentframe().f_lineno + 1
        starting(executor)  # the thread's own frames, Python's threading's, call faim there
        executor.submit(warner).result()  # the same thread, in_thread's work done, names its own first frame again
    assert [(warning.filename, warning.lineno) for warning in said][0] == (__file__, line)
    assert said[1].filename != __file__


def test_a_warning_given_as_a_module_of_faim_is_imported_names_the_line_that_imported_it(tmp_path: Path) -> None:
    (tmp_path / "given.py").write_text("from faim.notices import warn\nwarn('imported')\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("faim.given_import", tmp_path / "given.py")
    module = importlib.util.module_from_spec(spec)
    with pytest.warns(FaimWarning, match="^imported$") as said:
        line = inspect.currentframe().f_lineno + 1
        spec.loader.exec_module(module)  # through importlib's frames, as an import runs a module
    assert [(warning.filename, warning.lineno) for warning in said] == [(__file__, line)]


def test_a_filter_of_the_category_faim_warning_silences_faims_warnings_where_one_of_faims_module_does_not() -> None:
    detector = picture_detector()
    posts = [{"id": "a", "text": "a post"}]  # no picture, which the model reads
    for call in (detector.score, detector.embed, detector.predict, detector.explain):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", category=faim.FaimWarning)
            call(posts)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", module=r"faim(\..*)?$")  # the warning names this module, not faim's
            call(posts)
        assert [warning.category for warning in said] == [FaimWarning], call.__name__


@pytest.mark.filterwarnings("ignore::faim.FaimWarning")  # as pytest's filterwarnings setting takes it
@pytest.mark.filterwarnings("error")  # applied first, so the filter above comes before it
def test_pytests_filter_of_the_category_faim_warning_silences_them() -> None:
    picture_detector().score([{"id": "a", "text": "a post"}])
