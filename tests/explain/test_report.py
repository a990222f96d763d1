"""The explanation page joins the pieces of a word as its tokenizer marks them, and names each encoder of a stack
whose tokens it shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from faim.explain.attribute import Explanation, TaskExplanation, TokenReading
from faim.explain.report import (
    PAGE_HEAD,
    POST_FILE,
    check_report_folder,
    readings_html,
    task_html,
    task_parts,
    to_json,
    token_html,
    write_report,
)
from faim.preprocess.e5_pieces import MARKER


def shown(tokens: list[tuple[str, float]]) -> str:
    """The text a reader sees: the page's token spans without their markup."""
    return re.sub(r"<[^>]+>", "", token_html(tokens))


def test_wordpiece_continuations_join_the_word_before_them() -> None:
    assert shown([("they", 0.1), ("hat", 0.5), ("##ed", -0.2), ("it", 0.0)]) == "they hated it"


def test_sentencepiece_pieces_join_unless_they_start_a_word() -> None:
    tokens = [(f"{MARKER}@", -0.1), ("user", 0.3), (f"{MARKER}Wor", 0.2), ("st", 0.5), (f"{MARKER}hate", 1.0)]
    assert shown(tokens) == "@user Worst hate"
    assert shown([(f"{MARKER}so", 0.1), (MARKER, 0.4), ("ー", 0.2)]) == "so\u00a0ー"  # the lone mark keeps its shade


def test_each_piece_keeps_its_attribution_as_its_title_and_its_sign_as_its_colour() -> None:
    page = token_html([(f"{MARKER}good", -0.25), (f"{MARKER}bad", 0.5)])
    assert 'title="-0.2500">good<' in page and 'title="+0.5000">bad<' in page
    assert page.index("rgba(20,60,220,0.40)") < page.index("rgba(220,20,20,0.80)")


def read(tokens: list[tuple[str, float]], reader: str = "tiny_text", in_stack: bool = False) -> list[TokenReading]:
    return [TokenReading(reader, tokens, in_stack)]


def test_each_comments_tokens_follow_the_texts_under_their_number() -> None:
    comments = [read([("first", 0.3)]), [], read([("third", -0.2)])]
    task = TaskExplanation("harm", "yes", 0.9, [], read([("caption", 0.1)]), [], comments)
    page = re.sub(r"<[^>]+>", "|", task_html(task, []))
    assert re.sub(r"\|+", "|", page).count("comment") == 2 and "tiny_text" not in page  # one reader: not named
    assert page.index("caption") < page.index("comment 1") < page.index("first") < page.index("comment 3")
    assert "comment 2" not in page and page.index("comment 3") < page.index("third")
    alone = TaskExplanation("harm", "yes", 0.9, [], [], [], [read([("only", 0.3)])])
    assert '<span class="name">comment</span>' in task_html(alone, [])  # as the share bars name a lone comment


def test_the_readings_of_a_stack_are_shown_and_recorded_under_their_readers() -> None:
    stacked = read([("good", 0.2)], "hf_text, 1 of 3", True) + read([(f"{MARKER}good", 0.1)], "use_text, 3 of 3", True)
    task = TaskExplanation("harm", "yes", 0.9, [], stacked, [], [stacked])
    page = re.sub(r"<[^>]+>", "|", task_html(task, []))
    assert page.index("hf_text, 1 of 3") < page.index("use_text, 3 of 3") < page.index("comment · hf_text, 1 of 3")
    record = to_json(Explanation("p", [task], [], []), {"harm": []})["tasks"][0]
    assert [reading["reader"] for reading in record["tokens"]] == ["hf_text, 1 of 3", "use_text, 3 of 3"]
    assert record["comments"][0][1]["tokens"] == [{"token": f"{MARKER}good", "attribution": 0.1}]
    lone_member = TaskExplanation("harm", "yes", 0.9, [], read([("good", 0.2)], "hf_text, 1 of 2", True), [], [])
    assert "hf_text, 1 of 2" in task_html(lone_member, [])  # the n-grams beside it get no tokens


def test_a_folder_with_a_page_beside_files_faim_did_not_write_is_refused_and_kept(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html>", encoding="utf-8")
    (site / "data.json").write_text('{"precious": 1}', encoding="utf-8")
    with pytest.raises(FileExistsError, match=f"{site}: exists and is not one faim wrote"):
        check_report_folder(site)
    (site / "index.html").write_text(f"{PAGE_HEAD}<style>", encoding="utf-8")  # a report's page, not its files
    with pytest.raises(FileExistsError, match="no faim-explanations.json in it"):
        check_report_folder(site)
    assert sorted(path.name for path in site.iterdir()) == ["data.json", "index.html"]


def test_a_report_holding_a_file_it_did_not_write_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    report = tmp_path / "report"
    write_report([Explanation("p", [], [], [])], report)
    check_report_folder(report)  # its own files alone: replaced
    (report / "NOTES.md").write_text("keep", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"holds files its faim-explanations.json does not list \(NOTES.md\)"):
        check_report_folder(report)
    assert (report / "NOTES.md").read_text(encoding="utf-8") == "keep"


def test_a_report_written_before_reports_listed_their_posts_is_replaceable(tmp_path: Path) -> None:
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "index.html").write_text(f"{PAGE_HEAD}<style>", encoding="utf-8")
    for name in ("0000-old.json", "0000-old-picture0.png", "0001-post-harm-picture0-heat.png"):
        (earlier / name).write_text("old", encoding="utf-8")
    check_report_folder(earlier)
    written = write_report([Explanation("p", [], [], [])], earlier)
    assert written == earlier / "index.html" and not (earlier / "0000-old.json").exists()
    assert sorted(path.name for path in earlier.iterdir()) == ["0000-p.json", "faim-explanations.json", "index.html"]


def test_the_files_of_an_earlier_report_of_ten_thousand_posts_or_more_are_told_as_its_own() -> None:
    assert POST_FILE.fullmatch("0007-post_1.json") and POST_FILE.fullmatch("12345-post_2.png")
    assert not POST_FILE.fullmatch("data.json")


def test_each_tasks_heat_maps_get_files_of_their_own_where_task_names_give_no_safe_name_or_the_same_one(
    tmp_path: Path,
) -> None:
    picture, heat = np.zeros((4, 4, 3), np.uint8), np.ones((4, 4))
    names = ["ненависть", "спам", "hate!", "hate?", "hate2"]
    tasks = [TaskExplanation(name, "yes", 0.5, [], [], [heat * n]) for n, name in enumerate(names)]
    write_report([Explanation("p", tasks, [picture], [])], tmp_path / "out")
    record = json.loads((tmp_path / "out" / "0000-p.json").read_text(encoding="utf-8"))
    files = [task["pictures"][0]["heat_map"] for task in record["tasks"]]
    assert len(set(files)) == len(names) and all(POST_FILE.fullmatch(name) for name in files)
    assert files[2] == "0000-p-hate-picture0-heat.png"  # a task's name where it is its own
    assert all((tmp_path / "out" / name).is_file() for name in files)


def test_a_task_named_too_long_for_a_file_gets_heat_maps_of_its_name_cut_short(tmp_path: Path) -> None:
    picture, heat = np.zeros((4, 4, 3), np.uint8), np.ones((4, 4))
    tasks = [TaskExplanation(name, "yes", 0.5, [], [], [heat]) for name in ("h" * 300, "h" * 301)]
    write_report([Explanation("p", tasks, [picture], [])], tmp_path / "out")
    record = json.loads((tmp_path / "out" / "0000-p.json").read_text(encoding="utf-8"))
    files = [task["pictures"][0]["heat_map"] for task in record["tasks"]]
    assert len(set(files)) == 2 and all((tmp_path / "out" / name).is_file() for name in files)


def test_tasks_whose_names_differ_in_case_alone_get_heat_maps_of_names_differing_in_more() -> None:
    # Hate and hate took files macOS and Windows hold as one, each task's heat map replacing the other's there
    parts = task_parts(["Hate", "hate", "HATE2", "hate2"])
    assert len({part.casefold() for part in parts.values()}) == 4
    assert parts["Hate"] == "Hate"  # a task's name where it is its own
    # the later of two names coming to one takes a number after a dash, as plots and folds do: hate2 keeps its own
    assert task_parts(["hate", "Hate", "hate2"]) == {"hate": "hate", "Hate": "Hate-2", "hate2": "hate2"}


def test_a_task_named_as_a_file_may_be_keeps_its_name_beside_tasks_in_another_script() -> None:
    # the heat maps of a task named task were task-3's, where the tasks before it, nothing of whose names is left
    # in a file's, came to task
    parts = task_parts(["\u0643\u0631\u0627\u0647\u064a\u0629", "\u0636\u0631\u0631", "task", "hate_!", "hate_"])
    assert list(parts) == ["\u0643\u0631\u0627\u0647\u064a\u0629", "\u0636\u0631\u0631", "task", "hate_!", "hate_"]
    assert (parts["task"], parts["hate_"]) == ("task", "hate_")
    assert len({part.casefold() for part in parts.values()}) == 5


def test_a_text_written_right_to_left_is_set_apart_from_its_heading_to_read_in_its_own_direction() -> None:
    reading = TokenReading("e5", [("\u0644\u0627", 0.5), ("!", 0.1)])  # Arabic, then its punctuation
    page = readings_html([reading], "text", "comment 1")
    tokens = r"(<span [^>]+>[^<]+</span> ?)+"
    assert re.fullmatch(f'<p class="text"><span class="name">comment 1</span> <bdi>{tokens}</bdi></p>', page)


def test_a_task_label_or_post_id_written_right_to_left_is_set_apart_from_the_heading_around_it(tmp_path) -> None:
    # a label كراهية (2) took its brackets and the figures after it into its own direction, mismatching them
    task = TaskExplanation("\u0636\u0631\u0631", "\u0643\u0631\u0627\u0647\u064a\u0629 (2)", 0.5, [], [], [])
    assert task_html(task, []).startswith(
        '<div class="task"><h3><bdi>\u0636\u0631\u0631</bdi>: <bdi>\u0643\u0631\u0627\u0647\u064a\u0629 (2)</bdi> '
        "<small>p = 0.500</small></h3>"
    )
    page = write_report([Explanation("\u0645\u0646\u0634\u0648\u0631 1", [task], [], [])], tmp_path / "out")
    assert "<h2>post <bdi>\u0645\u0646\u0634\u0648\u0631 1</bdi></h2>" in page.read_text(encoding="utf-8")
