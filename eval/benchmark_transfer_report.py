"""Render the transfer results (``faim.eval.benchmark_transfer.run_transfer``) as the Markdown that leads
``RESULTS.md``: leave one dataset out (the ranking), each dataset alone, and what recalibrating for the held-out
dataset buys."""

from __future__ import annotations

from collections.abc import Mapping
from statistics import mean
from typing import Any

from faim.eval.benchmark_transfer import TransferDataset, same_training
from faim.eval.label_conflicts import MIN_GAP, MIN_POSTS
from faim.eval.recalibration import calibrated_range
from faim.eval.tables import Markdown, earlier_mark, format_value, markdown_name, markdown_table, model_cell, model_name
from faim.recipe import Recipe, RecipeError
from faim.recipe.compare import changed_fields, describe_changes

RECOMMENDED = "hate_text_general"
"""The recipe recipes/README.md recommends; its leave-one-out figures are set against the single-dataset ones."""


def seeded_model_cell(row: dict[str, Any], own_seed: bool = False) -> Markdown:
    """``tables.model_cell`` with, for a recipe, how many seeds its folds were trained with (one for a row from
    before seeds were counted), or with ``own_seed`` the seed of the model a recalibration was measured on where
    recorded."""
    if row["kind"] != "recipe":
        return model_cell(row)
    seeds = f"seed {row['seeds'][0]['seed']}" if own_seed and "seeds" in row else seeds_trained(row)
    return Markdown(f"{model_name(row)} ({seeds})" + earlier_mark(row))


def seeds_trained(row: dict[str, Any]) -> str:
    """``1 seed``, ``3 seeds``: how many seeds a row's fold was trained with."""
    count = seed_count(row)
    return f"{count} seed{'s' * (count > 1)}"


def seed_count(row: dict[str, Any]) -> int:
    """How many seeds a row's fold was trained with (one for a baseline or a row from before seeds were counted)."""
    return len(row.get("seeds", ())) or 1


def seed_figures(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The figures as trained of each seed a row's fold was trained with, the recipe's own seed first (the row's
    figures alone for a baseline or a row measured with one seed)."""
    return row.get("seeds") or [row["as_trained"]]


def figure_cell(row: dict[str, Any] | None, metric: str) -> str:
    """A row's figure as trained (the mean over its seeds), followed by the lowest and highest seed's in brackets
    where there are several; ``n/a`` for no row."""
    if row is None:
        return format_value(None)
    values = [figures[metric] for figures in seed_figures(row)]
    mean_cell = format_value(row["as_trained"][metric])
    return mean_cell if len(values) == 1 else f"{mean_cell} ({format_value(min(values))}–{format_value(max(values))})"


def transfer_sections(transfer: dict[str, Any], recipes: Mapping[str, dict[str, Any]] | None = None) -> list[str]:
    """The headings, notes and tables of the hate-speech transfer results; ``recipes``, the resolved recipes the
    results recorded (name → ``faim.recipe.compare.plain``), tell the recipes whose folds train the same weights
    (``same_weights_note``)."""
    names = [d["name"] for d in transfer["datasets"]]
    rows = transfer["rows"]
    loo = [row for row in rows if len(row["train_on"]) == len(names) - 1]
    single = [row for row in rows if len(row["train_on"]) == 1]
    datasets = "; ".join(f"**{d['name']}**: {d['description']}" for d in transfer["datasets"])
    seeded = any(seed_count(row) > 1 for row in rows)
    parts = [
        "## Selection by transfer: hate speech on data neither trained nor tuned on",
        "Each hate recipe keeps its model, training and evaluation settings and is trained on one dataset, or on "
        "all but one (validated, early-stopped and thresholded on those datasets' validation posts; each dataset read "
        "for training as the recipe reads it, such as Davidson without its offensive tweets where the recipe says "
        "so), then measured as trained on every post of each dataset it never saw, read as below. The baselines go "
        "through the same folds. "
        f"Datasets, each read as hate / not hate: {datasets}. The ranking is by the mean leave-one-out macro-F1. "
        "Beside a recipe's name, the seeds each of its folds was trained with (the recipe's own, then the next ones)"
        + (
            "; where several, its figures are the mean over them, with the lowest and highest seed's in brackets: on "
            "a dataset with few hateful posts, the threshold one seed learns can move macro-F1 by several points."
            if seeded
            else "."
        ),
    ]
    parts += same_weights_note(transfer, recipes or {})
    parts += leave_one_out_tables(loo, names)
    parts += single_dataset_table(single, names)
    parts += recommended_table(loo, single, names, seeded)
    parts += conflict_table(transfer.get("conflicts", []))
    parts += recalibration_table(loo)
    parts += adaptation_table(loo)
    if transfer["skipped"]:
        parts.append(
            "Not in these tables: " + "; ".join(f"`{s['recipe']}` ({s['reason']})" for s in transfer["skipped"])
        )
    return parts


def same_weights_note(transfer: dict[str, Any], recipes: Mapping[str, dict[str, Any]]) -> list[str]:
    """A note naming the recipes of the transfer rows whose every fold trains the same weights
    (``faim.eval.benchmark_transfer.same_training`` of their recorded ``recipes``; a recipe recorded by none, or
    that no longer validates, is left out), so that their rows read as one model's, and how their evaluation
    settings differ; empty where there are none."""
    resolved = {}
    for name in dict.fromkeys(row["name"] for row in transfer["rows"] if row["kind"] == "recipe"):
        try:
            resolved[name] = Recipe.recorded(recipes[name], name)
        except (KeyError, RecipeError):
            continue
    datasets = tuple(TransferDataset(d["name"], d["data"], d["description"]) for d in transfer["datasets"])
    notes = []
    for group in same_training(resolved, datasets):
        named = " and ".join(f"`{name}`" for name in group)
        changes = {
            field: change
            for name in group[1:]
            for field, change in changed_fields(recipes[group[0]]["eval"], recipes[name]["eval"], "eval.").items()
        }
        how = (
            f"their calibration differs ({describe_changes(changes)}), and with it their ECE"
            if changes
            else "they are one model, trained and measured again"
        )
        notes.append(
            f"{named} train the same weights in every fold (each fold replaces the data they train on), so their "
            f"macro-F1 and AUROC are one model's, ranked twice; {how}."
        )
    return notes


def leave_one_out_tables(loo: list[dict[str, Any]], names: list[str]) -> list[str]:
    """macro-F1 (the ranking), then AUROC and ECE, per held-out dataset and on average."""
    models = sorted({(row["name"], row["kind"]) for row in loo})
    rows = {(row["name"], row["held_out"]): row for row in loo}
    a_row = {row["name"]: row for row in loo}  # any of a model's rows: they share its seeds and run

    def score(model: tuple[str, str], metric: str) -> float:
        return mean(rows[model[0], name]["as_trained"][metric] for name in names if (model[0], name) in rows)

    ranked = sorted(models, key=lambda model: -score(model, "macro_f1"))
    parts = []
    for metric, title in (("macro_f1", "macro-F1"), ("auroc", "AUROC"), ("ece", "ECE")):
        header = ["rank", "model", *(f"{name} (trained on the others)" for name in names), "mean"]
        table = [
            [str(rank), seeded_model_cell(a_row[model[0]]),
             *(figure_cell(rows.get((model[0], name)), metric) for name in names),
             format_value(score(model, metric))]
            for rank, model in enumerate(ranked, 1)
        ]  # fmt: skip
        parts += [f"### Leave one dataset out — {title}", markdown_table(header, table)]
    return parts


def single_dataset_table(single: list[dict[str, Any]], names: list[str]) -> list[str]:
    """macro-F1 of each model trained on one dataset, on each other one."""
    keys = sorted({(row["name"], row["train_on"][0]) for row in single})
    rows = {(row["name"], row["train_on"][0], row["held_out"]): row for row in single}
    a_row = {(row["name"], row["train_on"][0]): row for row in single}
    table = []
    for name, trained in keys:
        held_out = [figure_cell(rows.get((name, trained, held)), "macro_f1") if held != trained else "(trained on)"
                    for held in names]  # fmt: skip
        table.append([seeded_model_cell(a_row[name, trained]), trained, *held_out])
    return [
        "### Trained on one dataset — macro-F1 on each other one",
        markdown_table(["model", "trained on", *names], table),
    ]


def recommended_table(
    loo: list[dict[str, Any]], single: list[dict[str, Any]], names: list[str], seeded: bool = False
) -> list[str]:
    """Per held-out dataset: the best recipe trained on one other dataset against the recommended recipe trained
    on all the others; ``seeded`` where some recipe was trained with several seeds (a note says they are compared
    by their means)."""
    table = []
    for held in names:
        candidates = [r for r in single if r["held_out"] == held and r["kind"] == "recipe"]
        general = next((r for r in loo if r["held_out"] == held and r["name"] == RECOMMENDED), None)
        if not candidates or general is None:
            continue
        best = max(candidates, key=lambda r: r["as_trained"]["macro_f1"])
        above = general["as_trained"]["macro_f1"] > best["as_trained"]["macro_f1"]
        general_cell = f"{figure_cell(general, 'macro_f1')}, {seeds_trained(general)}{earlier_mark(general)}"
        best_cell = Markdown(f"{seeded_model_cell(best)} on {markdown_name(best['train_on'][0])}")
        table.append([held, best_cell, figure_cell(best, "macro_f1"),
                      general_cell, "yes" if above else "no"])  # fmt: skip
    if not table:
        return []
    header = ["held out", "best recipe trained on one dataset", "its macro-F1",
              Markdown(f"`{RECOMMENDED}` trained on the others"), "above"]  # fmt: skip
    note = ["Compared by the mean over each recipe's seeds; the lowest and highest seed's figure in brackets."]
    return [f"### `{RECOMMENDED}` against the best single-dataset recipe", *(note if seeded else []),
            markdown_table(header, table)]  # fmt: skip


def conflict_table(pairs: list[dict[str, Any]]) -> list[str]:
    """Per pair of datasets, the terms they read the opposite way (``faim.eval.label_conflicts``): how many, how
    many of each one's posts hold one, and those in the most posts; empty where the results have none (a run from
    before they were measured)."""
    if not pairs:
        return []
    parts = [
        "### Where the datasets disagree: terms read the opposite way",
        "Terms one dataset's labels read as a sign of hate and another's as a sign of none: among the posts holding "
        "the term, hate is more common than in that dataset as a whole in one dataset and less common in the other "
        "(in brackets, the term's lean: the log-odds of hate among its posts less the dataset's own, at least "
        f"{MIN_GAP:g} apart; terms in {MIN_POSTS} or more posts of each). A model trained on the one learns the "
        "term as evidence the other's labels deny, whatever the model, so these terms are where a dataset's "
        "definition of hate does not carry to the other. Every post of each dataset, read as the folds measure it; "
        "`faim.eval.label_conflicts.conflicts` lists every such term of two labelled sets of texts. Terms are "
        "words lower-cased, spelt as the posts spell them, slurs included.",
    ]
    for pair in pairs:
        (first, second), holding = pair["datasets"], pair["share_holding"]
        parts.append(
            f"**{first} / {second}**: {pair['terms']} terms read the opposite way; {100 * holding[0]:.0f} % of "
            f"{first}'s posts and {100 * holding[1]:.0f} % of {second}'s hold at least one."
        )
        rows = [
            [shown["term"], *(f"{posts:,} posts, {100 * share:.0f} % hate ({lean:+.1f})"
                              for posts, share, lean in zip(shown["posts"], shown["shares"], shown["leans"]))]
            for shown in pair["shown"]
        ]  # fmt: skip
        if rows:
            parts.append(markdown_table(["term", first, second], rows))
    return parts


def recalibration_table(loo: list[dict[str, Any]]) -> list[str]:
    """ECE on each leave-one-out pair as trained, after fitting on 200 of the held-out posts, and after moving to
    the EM prior; the share of the error each closes."""
    measured = sorted((r for r in loo if r.get("recalibrated")), key=lambda r: (r["name"], r["held_out"]))
    if not measured:
        return []
    table = []
    for row in measured:
        before, fitted, unlabelled = seed_figures(row)[0]["ece"], row["recalibrated"], row["unlabelled"]
        table.append(
            [seeded_model_cell(row, own_seed=True), row["held_out"], format_value(before),
             f"{fitted['ece_mean']:.4f} ± {fitted['ece_sd']:.4f}", calibrated_range(fitted),
             closed(before, fitted["ece_mean"]),
             format_value(unlabelled.get("ece")), closed(before, unlabelled.get("ece")),
             format_value(unlabelled.get("prior")), format_value(unlabelled.get("estimated_prior"))]
        )  # fmt: skip
    labels, draws = measured[0]["recalibrated"]["labels"], measured[0]["recalibrated"]["draws"]
    header = ["model", "held out", "ECE as trained", f"fitted on {labels} labels", "a calibrated model's ECE there",
              "error closed",
              "moved to the EM prior (unlabelled)", "error closed", "prior trained on", "prior estimated"]  # fmt: skip
    note = (
        "`faim calibrate` on the held-out dataset's own posts, for the model of the recipe's own seed (its ECE as "
        "trained is that model's, not the mean over seeds above): fitted on a labelled sample (temperature, logit "
        f"shift and threshold; mean ± sd over {draws} draws, measured on the posts not drawn), or moved without "
        "labels to the share of positives EM estimates from the model's scores (Saerens et al., 2002), measured on "
        "every post. Next to the fitted ECE, the central 95 % of the ECEs a perfectly calibrated model would show on "
        "the same posts (outcomes drawn from the fitted probabilities, averaged over the draws): on a few hundred "
        "posts an ECE this far above 0 is the sample's, not the calibration's."
    )
    return ["### Recalibrated for the held-out dataset — ECE", note, markdown_table(header, table)]


def adaptation_table(loo: list[dict[str, Any]]) -> list[str]:
    """Macro-F1 and ECE on each leave-one-out pair as trained, after fitting the calibration on 200 of the held-out
    posts, and after correcting the head on the same draws first (``faim calibrate --head``); empty where no pair
    was measured with a head correction."""
    measured = sorted((r for r in loo if r.get("head_corrected")), key=lambda r: (r["name"], r["held_out"]))
    if not measured:
        return []
    table = []
    for row in measured:
        fitted, head = row["recalibrated"], row["head_corrected"]
        table.append(
            [seeded_model_cell(row, own_seed=True), row["held_out"], format_value(seed_figures(row)[0]["macro_f1"]),
             f"{fitted['macro_f1_mean']:.4f} ± {fitted['macro_f1_sd']:.4f}",
             f"{head['macro_f1_mean']:.4f} ± {head['macro_f1_sd']:.4f}",
             f"{head['ece_mean']:.4f} ± {head['ece_sd']:.4f}", calibrated_range(head)]
        )  # fmt: skip
    labels, draws = measured[0]["head_corrected"]["labels"], measured[0]["head_corrected"]["draws"]
    header = ["model", "held out", "macro-F1 as trained", f"calibration fitted on {labels} labels",
              "head corrected, then calibrated", "its ECE", "a calibrated model's ECE there"]  # fmt: skip
    note = (
        "A calibration keeps the order of posts, so where a dataset's labels call hate what the model ranks low it "
        "cannot help. `faim calibrate --head` also corrects the head on the labelled sample: a logistic regression "
        "on the whole-post embedding and the head's own logit, its calibration fitted on cross-fitted logits. "
        f"Macro-F1 on the posts not drawn (mean ± sd over the same {draws} draws of {labels} labels as above), for "
        "the model of the recipe's own seed, its macro-F1 as trained that model's."
    )
    return [f"### Adapted with {labels} labels of the held-out dataset — macro-F1", note, markdown_table(header, table)]


def closed(before: float, after: float | None) -> str:
    """The share of ``before`` an ``after`` closes, as a percentage (negative: it grew)."""
    if after is None or not before:
        return "n/a"
    return f"{100 * (before - after) / before:.0f} %"
