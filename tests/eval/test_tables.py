"""How a report's tables name a row's model and the run it came from."""

from __future__ import annotations

import html

import pytest

from faim.eval.tables import (
    code_span,
    heading_text,
    markdown_cell,
    markdown_image,
    markdown_name,
    markdown_table,
    markdown_text,
    model_cell,
    model_name,
    with_change,
)


def test_a_recipe_is_named_as_code_a_baseline_in_words_and_a_row_without_a_kind_is_a_recipes() -> None:
    assert model_name({"name": "hate_text_general", "kind": "recipe"}) == "`hate_text_general`"
    assert model_name({"name": "majority class", "kind": "baseline"}) == "majority class"
    assert model_name({"name": "misinfo_vmu_text"}) == "`misinfo_vmu_text`"


def test_a_row_kept_from_an_earlier_run_says_which_and_a_new_one_says_nothing() -> None:
    kept = {"name": "majority class", "kind": "baseline", "earlier_run": "2026-11-26T13:37:32+00:00"}
    assert model_cell(kept) == "majority class (earlier run, 2026-11-26 13:37)"
    assert model_cell({"name": "hate_text_general", "kind": "recipe"}) == "`hate_text_general`"


def test_a_change_follows_its_cell_signed_only_where_it_is_a_number() -> None:
    assert with_change("0.7000", -0.2) == "0.7000 (-0.2000)" and with_change("0.9000", 0.05) == "0.9000 (+0.0500)"
    assert with_change("n/a", float("nan")) == "n/a" and with_change("0.7000", None) == "0.7000"


def test_a_markdown_cell_holding_a_line_break_or_html_keeps_its_row_and_shows_its_text() -> None:
    table = markdown_table(["slice", "n"], [["line\nbreak", "2"], ["<script>alert(1)</script>", "3"], ["a|b & c", "1"]])
    lines = table.splitlines()
    assert len(lines) == 5  # header, rule and one line per row
    assert lines[2] == "| line break | 2 |"
    assert lines[3] == "| &lt;script&gt;alert(1)&lt;/script&gt; | 3 |"
    assert lines[4] == "| a\\|b &amp; c | 1 |"
    code = markdown_table(["recipe", "n"], [[model_name({"name": "<dict>"}), "1"]]).splitlines()[2]
    assert code == "| `<dict>` | 1 |"  # faim's own code span, which shows <, > and & as written
    assert model_name({"name": "a`b|c"}) == "``a`b\\|c``" and model_name({"name": "`x"}) == "`` `x ``"


def test_an_image_of_a_name_with_spaces_brackets_or_letters_of_any_script_stays_an_image() -> None:
    assert markdown_image("hate speech (strict)_roc.png", "hate speech (strict)_roc.png") == (
        "![hate speech (strict)\\_roc.png](hate%20speech%20%28strict%29_roc.png)"
    )
    shown = markdown_image("仇恨 [a]_roc.png", "eval/仇恨 [a]_roc.png")
    assert shown == r"![仇恨 \[a\]\_roc.png](eval/仇恨%20[a]_roc.png)"
    assert markdown_image("100%", "100%.png") == "![100%](100%25.png)"  # not read as an escape
    assert markdown_image("#hate?_roc.png", "#hate?_roc.png") == r"![#hate?\_roc.png](%23hate%3F_roc.png)"  # a file


def test_an_images_description_shows_a_name_that_looks_like_html_or_an_entity_as_written() -> None:
    # a task named a &amp; b was described as a & b, its heading showing a &amp; b
    assert markdown_image("a &amp; b <i>", "a.png") == "![a &amp;amp; b &lt;i&gt;](a.png)"


def test_a_cell_of_right_to_left_text_or_direction_controls_leaves_the_rest_of_its_row_left_to_right() -> None:
    rows = [["فلسطين", "40"], ["שלום 2024", "3"], ["\u202eevil", "1"], ["a\u2067b\u2069c", "2"]]
    lines = markdown_table(["slice", "n"], rows).splitlines()[2:]
    assert lines[0] == "| \u200eفلسطين\u200e | 40 |"  # marks left to right each side: the figures stay in their columns
    assert lines[1] == "| \u200eשלום 2024\u200e | 3 |"
    assert lines[2] == "| evil | 1 |"  # an override left open would show the rest of the row reversed
    assert lines[3] == "| abc | 2 |"


CODE_SPAN_LOOKALIKES = ["``<img src=x onerror=alert(1)>`", "\\`<img src=x onerror=alert(1)>`", "`a` <b>`", "``<b>``x`"]
"""Names whose backticks Markdown pairs otherwise than one backtick each side: an escaped or doubled opening backtick
opens no code span, and the HTML after it is run."""


@pytest.mark.parametrize("name", CODE_SPAN_LOOKALIKES)
def test_a_name_with_backticks_shows_its_html_as_written_in_a_heading_or_a_cell(name: str) -> None:
    # a task named ``<img src=x onerror=alert(1)>` was left as written, read as a code span, and metrics.md ran it
    for shown in (markdown_text(name), markdown_cell(name)):
        assert "<" not in shown and ">" not in shown
        assert "\\`" in shown and shown.count("`") == shown.count("\\`")  # no backtick left to open a code span


def test_a_name_shows_the_punctuation_markdown_reads_as_written() -> None:
    assert markdown_text("*hate* [a](b) #") == "\\*hate\\* \\[a\\](b) #"
    assert markdown_text("hate_speech _x_ a\\b") == "hate_speech \\_x\\_ a\\\\b"  # _ inside a word reads as written
    assert markdown_cell("a|b") == "a\\|b"


def test_a_name_holding_a_web_address_is_no_link_to_githubs_markdown() -> None:
    # GitHub's Markdown links http://, https://, ftp:// and www. where it reads them in the text, not escaped
    assert markdown_text("https://example.com/a") == "https\\://example.com/a"
    assert markdown_cell("src HTTP://x.org ftp://y.org") == "src HTTP\\://x.org ftp\\://y.org"
    assert markdown_text("www.example.com (WWW.x.org)") == "www\\.example.com (WWW\\.x.org)"
    assert markdown_text("xhttp://a.org awww.a.org http:/a") == "xhttp://a.org awww.a.org http:/a"  # GitHub links none


def test_markdown_renders_a_name_as_written() -> None:
    markdown_it = pytest.importorskip("markdown_it")
    render = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render
    for name in [*CODE_SPAN_LOOKALIKES, "*hate*", "[a](https://example.com)", "hate #", "#", "a ## ", "~~x~~", "a_b_"]:
        for shown in (render(f"## {markdown_text(name)} (binary)"), render(markdown_table(["task"], [[name]]))):
            assert "<img" not in shown and "<b>" not in shown and "<em>" not in shown and "<a " not in shown
            assert "<s>" not in shown and "<code>" not in shown
        assert render(f"## {heading_text(name)}").strip() == f"<h2>{html.escape(name.strip(), quote=False)}</h2>", name
    # commonmark links no web address, which GitHub's Markdown does: what stops it is written, and shown as written
    for name, written in [("https://a.org", "https\\://a.org"), ("www.a.org", "www\\.a.org")]:
        assert markdown_name(name) == written
        assert render(written).strip() == f"<p>{name}</p>"


def test_a_path_is_written_as_code_with_its_backticks_and_bars_as_written() -> None:
    # a path holding a backtick closed the code span metrics.md wrote it in, and the HTML after it ran
    path = "posts`<img src=x onerror=alert(1)>`|.jsonl"
    assert code_span(path) == "``posts`<img src=x onerror=alert(1)>`|.jsonl``"  # no | escaped outside a table
    assert code_span("`a`") == "`` `a` ``"
    markdown_it = pytest.importorskip("markdown_it")
    shown = markdown_it.MarkdownIt("commonmark").render(f"- data: {code_span(path)}")
    assert "<img" not in shown and f"<code>{html.escape(path, quote=False)}</code>" in shown


def test_a_recipe_named_right_to_left_or_with_a_direction_control_keeps_its_row_left_to_right() -> None:
    # a recipe's name, written as code, was kept as it was: an Arabic one lost its left-to-right marks and a U+202E in
    # one reached RESULTS.md and reversed the rest of its row
    arabic = markdown_table(["model", "AUROC"], [[model_cell({"name": "كراهية", "kind": "recipe"}), "0.8000"]])
    assert arabic.splitlines()[-1] == "| \u200e`كراهية`\u200e | 0.8000 |"
    controlled = markdown_table(["model", "AUROC"], [[model_cell({"name": "x\u202e", "kind": "recipe"}), "0.8000"]])
    assert controlled.splitlines()[-1] == "| `x` | 0.8000 |"


def test_a_hash_is_escaped_only_where_it_would_end_a_heading() -> None:
    # every # was escaped, so #metoo and C# read \#metoo and C\# in metrics.md as written
    assert markdown_text("#metoo C# a #") == "#metoo C# a #"
    assert markdown_cell("#metoo") == "#metoo"
    assert heading_text("#metoo C#") == "#metoo C#"
    assert heading_text("hate ##") == "hate \\#\\#" and heading_text("#") == "\\#" and heading_text("a # ") == "a \\# "
