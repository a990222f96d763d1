"""The error every recipe problem raises: file, YAML path, what is wrong, and what would be valid."""

from __future__ import annotations


class RecipeError(ValueError):
    """A recipe that cannot be used. The message starts with ``FILE: yaml.path:``.

    ``takes_mapping``: the key at ``path`` takes a mapping and the value given it does not fit its type, so an override
    that split a key holding a dot below it is told to give the mapping whole (``loader.dotted_key_remedy``).

    ``agrees``: the YAML paths of the other settings the value at ``path`` must agree with (``train.monitor`` for
    ``train.mode``), so that where a child recipe changed one of them and its base wrote ``path``, the error names the
    child's key rather than the base's file (``loader.in_base``).
    """

    def __init__(
        self, source: str, path: str, problem: str, takes_mapping: bool = False, agrees: tuple[str, ...] = ()
    ) -> None:
        location = ": ".join(part for part in (source, path) if part)
        super().__init__(f"{location}: {problem}" if location else problem)
        self.source = source
        self.path = path
        self.problem = problem
        self.takes_mapping = takes_mapping
        self.agrees = agrees
