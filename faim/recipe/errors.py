"""The error every recipe problem raises: file, YAML path, what is wrong, and what would be valid."""

from __future__ import annotations


class RecipeError(ValueError):
    """A recipe that cannot be used. The message starts with ``FILE: yaml.path:``."""

    def __init__(self, source: str, path: str, problem: str) -> None:
        location = ": ".join(part for part in (source, path) if part)
        super().__init__(f"{location}: {problem}" if location else problem)
        self.source = source
        self.path = path
        self.problem = problem
