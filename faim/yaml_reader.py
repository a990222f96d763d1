"""The YAML faim reads, in recipes and in ``--map`` values alike: the safe loader, numbers and booleans as YAML 1.2
reads them, a key given twice refused, and a problem told on one line. Apart from ``faim.recipe`` (which builds
components, hence imports torch) so that every command line can read YAML without loading torch."""

from __future__ import annotations

import collections.abc
import re
from typing import Any

import yaml


class RecipeLoader(yaml.SafeLoader):
    """The safe YAML loader reading numbers and booleans as YAML 1.2 does: ``1e-4`` (no dot) is a float, and only
    ``true`` and ``false`` are booleans, so labels such as ``[no, yes]`` stay words (YAML 1.1 reads ``yes``, ``no``,
    ``on`` and ``off`` as booleans; see also ``labels_as_words``). A key given twice in one mapping is refused, where
    YAML readers keep the last silently."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}  # each key → the line it is first given on
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # << merges another mapping, whose keys it may give again
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, collections.abc.Hashable) and key in first:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"found key {key!r} a second time (first given on line {first[key] + 1}); give each key once",
                    key_node.start_mark,
                )
            if isinstance(key, collections.abc.Hashable):
                first[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


RecipeLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)
RecipeLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in RecipeLoader.yaml_implicit_resolvers.items()
}
RecipeLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def parse_yaml(text: str) -> Any:
    return yaml.load(text, Loader=RecipeLoader)  # noqa: S506 - RecipeLoader is a SafeLoader


def yaml_problem(error: yaml.YAMLError, text: str) -> str:
    """What ``parse_yaml`` refusing ``text`` with ``error`` found, on one line, with each place in ``text`` it names:
    ``at line 3, column 8: expected ',' or '}', but got ':' (while parsing a flow mapping at line 2, column 11)``,
    where PyYAML's own message names each place in ``"<unicode string>"`` and quotes its line."""
    if isinstance(error, yaml.reader.ReaderError):  # a character YAML does not allow, at an index of text
        line, column = text.count("\n", 0, error.position), error.position - text.rfind("\n", 0, error.position) - 1
        return f"at line {line + 1}, column {column + 1}: character {chr(error.character)!r}: {error.reason}"
    if not isinstance(error, yaml.MarkedYAMLError):
        return f"({error})"
    problem = f"at {place(error.problem_mark)}: {error.problem}" if error.problem_mark else f"({error.problem})"
    context = f" ({error.context}{f' at {place(error.context_mark)}' if error.context_mark else ''})"
    tab = "; YAML indents and spaces out a line with spaces, not tabs: write spaces there" if TAB in problem else ""
    return problem + (context if error.context else "") + (f"; {error.note}" if error.note else "") + tab


TAB = "'\\t'"
"""How PyYAML's problem names a tab where it takes none, whatever it says of it: one indenting a line or between a
value and a comment (``found character '\\t' that cannot start any token``), one after a block scalar's ``|`` or
after a tag (``but found '\\t'``)."""


def place(mark: yaml.Mark) -> str:
    """Where ``mark`` is in the YAML text read, as an error says it: ``line 2, column 11``."""
    return f"line {mark.line + 1}, column {mark.column + 1}"
