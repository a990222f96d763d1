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

from faim.assembly import task_specs
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
class Shift:
    """Another dataset of the same task, on which models trained on a benchmark dataset are also measured as they
    are: the temperature and threshold stay the ones chosen on the benchmark's validation split. It shows how a
    model carries over to posts from other sources, periods, targets and annotators.

    Attributes:
        name: Short name, heading its columns (``"ETHOS"``).
        description: What its posts are, for the note above the table.
        data: The ``data:`` section of its source, without ``task`` (the benchmark's task name is added). Every
            split the source has is read: none of its posts is trained on.
    """

    name: str
    description: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Dataset:
    """A benchmark dataset.

    Attributes:
        title: Heading of its table.
        metric: Key of the headline metric in the metrics dicts of ``faim.eval.metrics`` (``macro_f1``, ``accuracy``).
        published: Published test-split figures of the headline metric.
        published_view: Data arguments a recipe's source must have for the published figures to concern it
            (e.g. LIAR's six-way labels); empty: every view.
        holdout_by: A ``Post.meta`` field whose groups the validation split holds out (VMU's events): each recipe is
            also trained without every group in turn and measured on it (``faim.eval.trained_holdout``), and its
            frozen embeddings probed the same way (``faim.eval.group_holdout``); ``None``: neither.
        every_post: Data settings under which a recipe's source reads every labelled post of the dataset (VMU's
            ``require_image: false``, the videos' posts too), set on the recipe's data section (a source of the
            dataset's own type, not one wrapped in ``without`` or ``concat``): the models trained without each group
            are also measured on every post of it, as the dataset's official test counts them; empty: the posts the
            recipe reads are every post.
        shifts: Other datasets of the same task every recipe and baseline is also measured on (``Shift``).
    """

    title: str
    metric: str
    published: tuple[Published, ...] = ()
    published_view: dict[str, Any] = field(default_factory=dict)
    holdout_by: str | None = None
    every_post: dict[str, Any] = field(default_factory=dict)
    shifts: tuple[Shift, ...] = ()


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
        shifts=(
            Shift(
                "ETHOS",
                "ETHOS binary (Mollas et al., 2022): comments from social media platforms, as its README says, "
                "with hate against any target (its categories: gender, race, national origin, disability, "
                "religion, sexual orientation), where TweetEval's is against immigrants and women; a comment is "
                "hate when at least half its annotators said so",
                {"type": "ethos", "root": "../shared/data/ethos"},
            ),
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
        holdout_by="event",
        every_post={"require_image": False},
    ),
    "emoji_pairs": Dataset(
        "Caption/picture mismatch (EmojiOne pictures and captions, Debian package ruby-gemojione)",
        "auroc",
    ),
}


@dataclass(frozen=True)
class View:
    """A dataset + label view: the posts and labels a recipe trains and validates on.

    Recipes sharing a view share one run of the reference baselines.

    Attributes:
        source_type: The benchmark dataset: the recipe's ``data.type``, or for a ``concat`` source that validates
            on its first member, that member's type.
        arguments: Canonical JSON of the whole ``data:`` section (``type`` included), defaults filled in.
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
        """The arguments that differ from the source's defaults (besides ``root`` and ``task``), or ``default``;
        a ``concat`` source validating on its first member adds its extra training members (``default + train on
        davidson (labels=binary)``), one validating on all of them names each (``trained and validated on
        tweeteval, ethos``)."""
        data = json.loads(self.arguments)
        if data["type"] != "concat":
            return changed_arguments(data)
        if data["evaluate_on"] == "all":
            return f"trained and validated on {', '.join(member_label(member) for member in data['sources'])}"
        extras = ", ".join(member_label(member) for member in data["sources"][1:])
        return f"{changed_arguments(data['sources'][0])} + train on {extras}"


def member_label(member: dict[str, Any]) -> str:
    """A canonical ``concat`` member as a view names it: its type, with its changed arguments in brackets."""
    changed = changed_arguments(member)
    return member["type"] + ("" if changed == "default" else f" ({changed})")


def changed_arguments(data: dict[str, Any]) -> str:
    """A canonical source section's arguments that differ from the defaults (not ``root``/``task``), or ``default``."""
    defaults = canonical_data({"type": data["type"], "root": ""})
    changed = [
        f"{key}={value}"
        for key, value in data.items()
        if key not in ("type", "root", "task") and value != defaults.get(key)
    ]
    return ", ".join(changed) or "default"


def canonical_data(data: dict[str, Any]) -> dict[str, Any]:
    """A ``data:`` section with the source's defaults filled in, and a ``concat`` source's members likewise."""
    cls = lookup("source", data["type"], "data")
    given = {key: value for key, value in data.items() if key != "type"}
    parameters = inspect.signature(cls).parameters
    arguments = {
        name: given.get(name, parameter.default)
        for name, parameter in parameters.items()
        if name in given or parameter.default is not inspect.Parameter.empty
    }
    if data["type"] == "concat":
        arguments["sources"] = [canonical_data(member) for member in arguments["sources"]]
    return {"type": data["type"]} | arguments


def validated_source(data: dict[str, Any]) -> dict[str, Any] | None:
    """The ``data:`` section the validation posts come from: ``data`` itself, a ``concat`` source's first member
    when it validates on that (``evaluate_on: first``), or ``None`` when it validates on several datasets."""
    if data["type"] != "concat":
        return data
    canonical = canonical_data(data)
    return canonical["sources"][0] if canonical["evaluate_on"] == "first" else None


def benchmark_type(data: dict[str, Any]) -> str | None:
    """The benchmark dataset a ``data:`` section validates on (a key of ``DATASETS``), or ``None``."""
    validated = validated_source(data)
    return validated["type"] if validated is not None and validated["type"] in DATASETS else None


def recipe_views(recipe: Recipe) -> list[View]:
    """The views of a recipe, one per task head, in head order.

    Raises:
        ValueError: When the recipe validates on no benchmark dataset (``dataset_for``).
    """
    dataset_for(recipe)
    kind = benchmark_type(recipe.data)
    arguments = json.dumps(canonical_data(recipe.data), sort_keys=True)
    return [
        View(kind, arguments, task, recipe.eval.threshold_objective, recipe.eval.threshold_target)
        for task in task_specs(recipe.model)
    ]


def member_views(recipe: Recipe) -> list[tuple[dict[str, Any], list[View]]]:
    """For a recipe validating on several datasets at once (a ``concat`` source with ``evaluate_on: all``), each
    member that is a benchmark dataset, as its ``data:`` section and the recipe's views there (one per task head):
    the recipe is also measured on that member's validation posts, beside the recipes validating on it alone.
    Empty for any other recipe."""
    data = canonical_data(recipe.data)
    if data["type"] != "concat" or data["evaluate_on"] != "all":
        return []
    arguments = json.dumps(data, sort_keys=True)
    objective, target = recipe.eval.threshold_objective, recipe.eval.threshold_target
    return [
        (member, [View(member["type"], arguments, task, objective, target) for task in task_specs(recipe.model)])
        for member in data["sources"]
        if member["type"] in DATASETS
    ]


def dataset_for(recipe: Recipe) -> Dataset:
    """The benchmark dataset a recipe validates on.

    Raises:
        ValueError: When the benchmark knows no dataset for the recipe's validation source (its ``data.type``,
            or a ``concat`` source's first member), naming the known ones.
    """
    kind = benchmark_type(recipe.data)
    if kind is None:
        validated = validated_source(recipe.data)
        what = "a concat source validating on all its members" if validated is None else repr(validated["type"])
        raise ValueError(
            f"{recipe.source}: data validates on {what}, no benchmark dataset; known: {', '.join(DATASETS)} "
            "(faim.eval.benchmark_datasets.DATASETS)"
        )
    return DATASETS[kind]


def published_applies(dataset: Dataset, view: View) -> bool:
    """Whether the dataset's published figures concern this view (its label view matches ``published_view``)."""
    arguments = validated_source(json.loads(view.arguments))
    return arguments is not None and all(arguments.get(key) == value for key, value in dataset.published_view.items())
