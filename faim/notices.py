"""``FaimWarning``, the class of every warning faim gives: the ``faim`` command prints one as a line of its own,
``faim COMMAND: warning: MESSAGE``, as it prints its errors, and a warning of another package as Python does."""

from __future__ import annotations


class FaimWarning(UserWarning):
    """Something faim tells its user of and goes on: a plug-in that failed to load, a setting it had to bend, a
    report missing a part."""
