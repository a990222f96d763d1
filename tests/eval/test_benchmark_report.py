"""The benchmark's Markdown: the table of each modality masked out says what is left of the kinds the rows read."""

from __future__ import annotations

from faim.eval.benchmark_report import ablation_section


def recipe_row(name: str, kinds: tuple[str, ...]) -> dict:
    ablations = {f"without_{kind}": {"accuracy": 0.5} for kind in kinds}
    return {"name": name, "kind": "recipe", "view": "default", "value": 0.7, "ablations": ablations}


def test_the_note_of_the_masked_modalities_names_the_kinds_the_rows_read() -> None:
    heading, note, table = ablation_section([recipe_row("liar", ("meta", "text"))], "accuracy", "accuracy")
    assert note.endswith("without the meta, the text alone; without the text, the meta alone.")
    assert "picture" not in note and "without meta | without text" in table
    _, note, _ = ablation_section([recipe_row("three", ("comments", "image", "text"))], "accuracy", "accuracy")
    assert note.endswith(
        "without the comments, the image and text alone; without the image, the comments and text alone; without the "
        "text, the comments and image alone."
    )
    rows = [recipe_row("two", ("image", "text")), recipe_row("three", ("comments", "image", "text"))]
    _, note, _ = ablation_section(rows, "accuracy", "accuracy")
    assert note.endswith("without each kind, the others the model reads alone.")
