"""What the benchmark knows per dataset, keyed by a recipe's ``data.type``: headline metric and published figures.

Published figures are literature constants, all on the official *test* splits (withheld here), so they are
never comparable one-to-one with the validation figures the benchmark measures. They are listed with their
source; ``../shared/data/README.md`` collects them.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from typing import Any

from faim.build import task_specs
from faim.data.targets import TaskSpec
from faim.recipe import Recipe
from faim.registry import lookup


@dataclass(frozen=True)
class Published:
    """One published result on a dataset's official test split.

    Attributes:
        model: The model as its authors name it.
        value: The headline metric, on the same 0-1 scale as ours.
        source: Where the figure is published.
    """

    model: str
    value: float
    source: str


@dataclass(frozen=True)
class Dataset:
    """A benchmark dataset.

    Attributes:
        title: Heading of its table.
        metric: Key of the headline metric in the metrics dicts of ``faim.eval.metrics`` (``macro_f1``, ``accuracy``).
        published: Published test-split figures of the headline metric.
        published_view: Data arguments a recipe's source must have for the published figures to concern it
            (e.g. LIAR's six-way labels); empty: every view.
    """

    title: str
    metric: str
    published: tuple[Published, ...] = ()
    published_view: dict[str, Any] = field(default_factory=dict)


TWEETEVAL = "TweetEval (Barbieri et al., 2020, Findings of EMNLP) and its leaderboard"
TIMELMS = "TimeLMs (Loureiro et al., 2022), as reported on the TweetEval leaderboard"
LIAR = "Wang (2017), 'Liar, Liar Pants on Fire', ACL"
SPOTFAKE = "SpotFake (Singhal et al., 2019), MediaEval 2016 test set, posts with images"
CITED = "as cited by later multimodal fake-news papers on the same test set (not verified here)"

DATASETS: dict[str, Dataset] = {
    "tweeteval": Dataset(
        "TweetEval hate (SemEval-2019 HatEval)",
        "macro_f1",
        (
            Published("all 'not-hate' (majority class)", 0.366, TWEETEVAL),
            Published("SVM", 0.367, TWEETEVAL),
            Published("FastText", 0.506, TWEETEVAL),
            Published("BLSTM", 0.526, TWEETEVAL),
            Published("RoBERTa-base", 0.466, TWEETEVAL),
            Published("RoBERTa-retrained", 0.523, TWEETEVAL),
            Published("TimeLMs-2021", 0.551, TIMELMS),
            Published("BERTweet", 0.564, TWEETEVAL),
        ),
    ),
    "liar": Dataset(
        "LIAR (political statements)",
        "accuracy",
        (
            Published("majority class", 0.209, LIAR),
            Published("Bi-LSTM", 0.233, LIAR),
            Published("CNN", 0.270, LIAR),
            Published("hybrid CNN, text + all metadata", 0.274, LIAR),
        ),
        {"labels": "six_way"},
    ),
    "vmu": Dataset(
        "MediaEval 2016 Verifying Multimedia Use ('Twitter')",
        "accuracy",
        (
            Published("EANN", 0.715, CITED),
            Published("MVAE", 0.745, CITED),
            Published("SpotFake", 0.777, SPOTFAKE),
            Published("CAFE", 0.806, CITED),
            Published("MCAN", 0.809, CITED),
        ),
    ),
}


@dataclass(frozen=True)
class View:
    """A dataset + label view: the posts and labels a recipe trains and validates on.

    Recipes sharing a view share one run of the reference baselines.

    Attributes:
        source_type: The recipe's ``data.type``.
        arguments: Canonical JSON of the data source's constructor arguments, defaults filled in.
        task: The task the baselines predict (the recipe's head).
        threshold_objective: How binary thresholds are chosen on validation (the recipe's ``eval``).
        threshold_target: The target of a constrained objective.
    """

    source_type: str
    arguments: str
    task: TaskSpec
    threshold_objective: str
    threshold_target: float

    @property
    def label(self) -> str:
        """The arguments that differ from the source's defaults (besides ``root`` and ``task``), or ``default``."""
        arguments = json.loads(self.arguments)
        defaults = source_arguments({"type": self.source_type, "root": ""})
        changed = [
            f"{key}={value}"
            for key, value in arguments.items()
            if key not in ("root", "task") and value != defaults.get(key)
        ]
        return ", ".join(changed) or "default"


def source_arguments(data: dict[str, Any]) -> dict[str, Any]:
    """A ``data:`` section's constructor arguments with the source's defaults filled in (``type`` left out)."""
    cls = lookup("source", data["type"], "data")
    given = {key: value for key, value in data.items() if key != "type"}
    parameters = inspect.signature(cls).parameters
    return {
        name: given.get(name, parameter.default)
        for name, parameter in parameters.items()
        if name in given or parameter.default is not inspect.Parameter.empty
    }


def recipe_views(recipe: Recipe) -> list[View]:
    """The views of a recipe, one per task head, in head order."""
    arguments = json.dumps(source_arguments(recipe.data), sort_keys=True)
    return [
        View(recipe.data["type"], arguments, task, recipe.eval.threshold_objective, recipe.eval.threshold_target)
        for task in task_specs(recipe.model)
    ]


def dataset_for(recipe: Recipe) -> Dataset:
    """The benchmark dataset of a recipe's data source.

    Raises:
        ValueError: When the benchmark knows no dataset for the recipe's ``data.type``, naming the known ones.
    """
    kind = recipe.data["type"]
    if kind not in DATASETS:
        raise ValueError(
            f"{recipe.source}: data.type {kind!r} is no benchmark dataset; known: {', '.join(DATASETS)} "
            "(faim.eval.benchmark_datasets.DATASETS)"
        )
    return DATASETS[kind]


def published_applies(dataset: Dataset, view: View) -> bool:
    """Whether the dataset's published figures concern this view (its label view matches ``published_view``)."""
    arguments = json.loads(view.arguments)
    return all(arguments.get(key) == value for key, value in dataset.published_view.items())
