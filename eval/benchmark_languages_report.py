"""Render the results of ``faim.eval.benchmark_languages.run_languages``: the hate recipes, trained on English, on
their own validation posts by language and on labelled posts no recipe trains on (other languages, other sources)."""

from __future__ import annotations

from typing import Any

from faim.eval.tables import format_value, markdown_table, model_cell


def language_sections(languages: dict[str, Any]) -> list[str]:
    """The heading, notes and table of the hate recipes beyond the datasets they train on."""
    sets = [s for s in languages["sets"] if s["name"] not in {m["name"] for m in languages["missing"]}]
    parts = [
        "## Hate speech beyond the datasets trained on: other languages, other sources",
        "Each hate recipe trained as shipped on the English data here, measured as trained (its own calibration and "
        "threshold) on its validation posts, on those `faim eval` identified as English, and on labelled posts no "
        "recipe trains or tunes on: "
        + "; ".join(f"**{s['name']}** ({s['language']}): {s['description']}" for s in languages["sets"])
        + ".",
    ]
    if languages["missing"]:
        parts.append(
            "Not measured, their data missing: "
            + "; ".join(f"{m['name']} (`{m['path']}`; `make outside-data`)" for m in languages["missing"])
        )
    header = ["recipe", "validation macro-F1", "validation, English posts"]
    for s in sets:
        header += [f"{s['name']} macro-F1", "AUROC", "ECE"]
    table = []
    for row in languages["rows"]:
        english = row["validation"].get("en", {})
        cells = [model_cell(row), format_value(row["validation"]["all"].get("macro_f1")),
                 format_value(english.get("macro_f1"))]  # fmt: skip
        for s in sets:
            figures = row["sets"].get(s["name"], {})  # a row kept from a run that lacked the set: n/a
            cells += [format_value(figures.get(metric)) for metric in ("macro_f1", "auroc", "ece")]
        table.append(cells)
    parts.append(markdown_table(header, table))
    return parts
