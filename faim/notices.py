"""``FaimWarning``, the class of every warning faim gives: the ``faim`` command prints one as a line of its own,
``faim COMMAND: warning: MESSAGE``, as it prints its errors, and a warning of another package as Python does; and
``MissingExtra``, the error of a feature whose optional package is not installed, which it prints as one line too."""

from __future__ import annotations


class FaimWarning(UserWarning):
    """Something faim tells its user of and goes on: a plug-in that failed to load, a setting it had to bend, a
    report missing a part."""


class MissingExtra(ImportError):
    """An optional package a feature asked for needs (Ray Data for ``--engine ray``, Hugging Face datasets for a
    dataset file) is not installed; the message names the feature and the ``pip install`` of its extra."""
