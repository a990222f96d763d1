"""The YAML faim reads in recipes and ``--map`` values."""

from __future__ import annotations

import pytest
import yaml

from faim.yaml_reader import parse_yaml, yaml_problem


def test_a_merge_key_may_give_keys_again_that_the_mapping_overrides() -> None:
    merged = parse_yaml("a: &a {lr: 1, seed: 2}\nb: &b {patience: 4}\ntrain: {<<: [*a, *b], lr: 3}\n")
    assert merged["train"] == {"lr": 3, "seed": 2, "patience": 4}
    with pytest.raises(yaml.YAMLError, match="found key 'lr' a second time"):
        parse_yaml("a: &a {seed: 2}\ntrain: {<<: *a, lr: 3, lr: 4}\n")


def test_numbers_and_booleans_read_as_yaml_1_2_reads_them() -> None:
    assert parse_yaml("[1e-4, no, yes, on, true, False]") == [1e-4, "no", "yes", "on", True, False]


def test_a_problem_is_told_on_one_line_with_its_places() -> None:
    text = "a: {b: 1\nc: 2"
    with pytest.raises(yaml.YAMLError) as caught:
        parse_yaml(text)
    problem = yaml_problem(caught.value, text)
    assert "\n" not in problem and "<unicode string>" not in problem
    assert problem.startswith("at line 2, column ")


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("train:\n\tmax_epochs: 2\n", "line 2, column 1"),
        ("lr: 1\t# c\n", "line 1"),
        ("a: |\t# c\n  x\n", "line 1, column 5"),  # expected chomping or indentation indicators, but found '\t'
        ("a: !!str\t1\n", "line 1, column 9"),  # expected ' ', but found '\t'
    ],
)
def test_a_tab_yaml_takes_none_at_is_told_to_be_spaces(text: str, at: str) -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        parse_yaml(text)
    problem = yaml_problem(caught.value, text)
    assert problem.startswith(f"at {at}") and "'\\t'" in problem
    assert problem.endswith("; YAML indents and spaces out a line with spaces, not tabs: write spaces there")
