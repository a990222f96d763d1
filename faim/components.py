"""Every registered component, and which constructor arguments are derived rather than written in a recipe.

Importing this module registers the built-in encoders, fusions, heads and data sources (importing their packages does
that), so the decorators it gives other code (``faim.register_encoder`` and the others) refuse a built-in's name at
once; ``lookup`` and ``registries`` also load, once, every installed plug-in (the ``faim.plugins`` entry-point group,
looked for again once a folder of ``sys.path`` changes: ``installed_plugins``). Recipe validation, model building and
``faim recipe list`` read the registries through here, so what they see never depends on what happened to be imported
before. A plug-in that fails to load is warned of and skipped, so a command that needs none of its components runs; a
recipe or model naming a type that is not registered is refused naming each plug-in that failed and why
(``failed_plugins_note``).

Sizes flow forward and are never written: an encoder's ``output_dim`` gives the fusion its ``input_dims``, the
fusion's ``output_dim`` gives each head its ``input_dim``, and a head's label list gives ``num_classes`` /
``num_labels`` (``DERIVED``, ``head_sizes``).
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from pathlib import PurePath
from typing import Any

import faim.data.concat  # noqa: F401  (registers every built-in source; concat sits on top of the others)
import faim.data.without  # noqa: F401  (so does without)
import faim.encoders  # noqa: F401  (registers the built-in encoders)
import faim.fusion  # noqa: F401  (registers the built-in fusions)
import faim.tasks  # noqa: F401  (registers the built-in heads)
from faim import registry
from faim.data.targets import TaskSpec
from faim.notices import warn
from faim.registry import (  # noqa: F401  (register_*: faim.register_*, given once the built-ins are registered)
    PLUGIN_GROUP,
    REGISTRIES,
    PluginWarning,
    as_written,
    constructor_arguments,
    register_encoder,
    register_fusion,
    register_head,
    register_source,
)
from faim.wording import plural

DERIVED: dict[str, tuple[str, ...]] = {
    "encoder": (),
    "fusion": ("input_dims",),
    "head": ("input_dim", "num_classes", "num_labels"),
    "source": (),
}
"""Per kind, the constructor arguments the builder computes; a recipe may not write them."""

RESERVED: dict[str, tuple[str, ...]] = {
    "encoder": ("type",),
    "fusion": ("type", "kinds"),
    "head": ("type", "labels"),
    "source": ("type",),
}
"""Per kind, the recipe keys of a component that are not constructor arguments."""

_plugins_tried: dict[str, str | None] = {}
"""Each ``faim.plugins`` entry point loaded so far, by its ``name = value``: ``None`` where it loaded, else the line
saying why it failed."""


_plugins_found: tuple[tuple[tuple[str, int | None], ...], list[EntryPoint]] | None = None
"""The ``faim.plugins`` entry points installed when last looked for, with the ``path_state`` they were found in."""


def path_state() -> tuple[tuple[str, int | None], ...]:
    """Each entry of ``sys.path`` with the time its folder (or file) last changed, ``None`` where there is none: what
    installing or removing a package changes, as ``importlib.metadata`` itself takes it."""
    state = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except (OSError, TypeError, ValueError):  # no such path, or not one (a path hook's name)
            state.append((entry, None))
    return tuple(state)


def installed_plugins(afresh: bool = False) -> list[EntryPoint]:
    """The ``faim.plugins`` entry points installed, looked for again only where a folder of ``sys.path`` changed
    since they were last (``path_state``) or ``afresh``: looking reads every installed package's metadata, which took
    most of the time of reading a recipe, each of which reads the registries several times; a plug-in installed while
    the process runs (``pip install`` in a notebook) is found at the next lookup. A package's metadata may change
    without its folder's changing (pip writes a dist-info's ``entry_points.txt`` after making it, ``setup.py develop``
    rewrites an egg-info's in place), so a type not registered is looked for afresh before it is refused
    (``holding``)."""
    global _plugins_found
    state = path_state()  # taken before looking, so that a package installed as it looks is looked for again
    if afresh or _plugins_found is None or _plugins_found[0] != state:
        _plugins_found = state, list(entry_points(group=PLUGIN_GROUP))
    return _plugins_found[1]


def load_plugins(afresh: bool = False) -> None:
    """Import each module of the ``faim.plugins`` entry-point group (``installed_plugins``, looked for ``afresh`` or
    not) not tried before; each registers its components.

    One that fails (its import raises, or it registers a name taken) is warned of, once, and skipped. An entry point
    is remembered once it is tried, so a load stopped part way (Ctrl-C) goes on where it stopped when called again.
    """
    for entry in installed_plugins(afresh):
        key = f"{entry.name} = {entry.value}"
        if key in _plugins_tried:
            continue
        failure = load_failure(entry)
        _plugins_tried[key] = failure
        if failure is not None:
            warn(f"{failure}; its components are not registered", PluginWarning)


def load_failure(entry: EntryPoint) -> str | None:
    """Import ``entry``'s module; ``None`` when it loads, else the line ``plugin_failure`` writes. A plug-in that
    does not load leaves nothing of its own behind (``forget_partial_load``), so it loads whole when tried again."""
    registered = {kind: set(table) for kind, table in REGISTRIES.items()}
    imported = set(sys.modules)
    try:
        entry.load()
    except BaseException as error:
        forget_partial_load(entry.module.split(".")[0], registered, imported)
        if not isinstance(error, Exception):
            raise  # stopped (Ctrl-C): tried again when next asked
        return plugin_failure(entry, error)  # a plug-in's import may raise anything; it is reported, never raised
    return None


def forget_partial_load(package: str, registered: dict[str, set[str]], imported: set[str]) -> None:
    """Take out what a plug-in's ``package`` registered and imported of its own since ``registered`` and ``imported``
    were taken; what its modules imported of faim's, with faim's registrations, stays as it is."""

    def own(module: str) -> bool:
        return module == package or module.startswith(f"{package}.")

    for kind, table in REGISTRIES.items():
        for name in [name for name, cls in table.items() if name not in registered[kind] and own(cls.__module__)]:
            del table[name]
    for module in [module for module in sys.modules if module not in imported and own(module)]:
        del sys.modules[module]


def plugin_failure(entry: EntryPoint, error: Exception) -> str:
    """One line naming the plug-in, its entry point, the package installing it (where known) and ``error``; for a
    module the plug-in imports and that is not installed, what to install or uninstall."""
    package = entry.dist.name if getattr(entry, "dist", None) is not None else None
    where = f"entry point {PLUGIN_GROUP}: {entry.name} = {entry.value}" + (f", package {package}" if package else "")
    line = f"plug-in {entry.name!r} ({where}) failed to load: {type(error).__name__}: {error}"
    if isinstance(error, ModuleNotFoundError) and error.name:
        line += f" (install the Python module {error.name.split('.')[0]!r} it imports"
        line += f", or uninstall {package})" if package else ")"
    return line


def failed_plugins_note() -> str:
    """What an unknown component type's error adds: each plug-in that failed to load, which may be the one that
    registers it (``""`` when none failed)."""
    failures = [failure for failure in _plugins_tried.values() if failure is not None]
    return "".join(f"; {failure}" for failure in failures)


def registries() -> dict[str, dict[str, type]]:
    """Kind → name → class of every registered component, plug-ins included."""
    load_plugins()
    return REGISTRIES


def holding(kind: str, name: Any) -> dict[str, type]:
    """The registry of ``kind``, plug-ins included; where ``name`` is not in it, after looking for plug-ins afresh,
    whatever ``installed_plugins`` kept, so that one whose entry point came since it looked is found."""
    table = registries()[kind]
    if name not in table:
        load_plugins(afresh=True)
    return table


def lookup(kind: str, name: str, where: str = "") -> type:
    """The class registered as ``name`` (plug-ins included, ``holding``); raises KeyError naming the valid choices
    and each plug-in that failed to load."""
    holding(kind, name)
    try:
        return registry.lookup(kind, name, where)
    except KeyError as error:
        raise KeyError(f"{error.args[0]}{failed_plugins_note()}") from None


def settable_arguments(kind: str, cls: type) -> list[str]:
    """The constructor arguments of a registered class a recipe may set (derived ones left out)."""
    params = inspect.signature(cls).parameters.values()
    return [p.name for p in params if p.name not in DERIVED[kind] and p.kind is not p.VAR_KEYWORD]


def takes_any_key(cls: type) -> bool:
    """Whether a registered class's constructor takes any keyword (a ``**options`` parameter), so a recipe may give it
    any key but the reserved and derived ones, the values of those its named parameters do not take unchecked."""
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(cls).parameters.values())


def head_sizes(task_type: str, labels: tuple[str, ...]) -> dict[str, int]:
    """The size argument a head of ``task_type`` derives from its labels (none for a binary head)."""
    return {"multiclass": {"num_classes": len(labels)}, "multilabel": {"num_labels": len(labels)}}.get(task_type, {})


def component_args(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A recipe component mapping's constructor arguments: every key but the reserved ones."""
    return {key: value for key, value in spec.items() if key not in RESERVED[kind]}


def component_spec(kind: str, component: object) -> dict[str, Any]:
    """The recipe mapping that builds ``component`` again: its ``type:`` and the arguments it was built with (a path
    as its string; those a ``**`` parameter took by their own names), derived ones and parameters named as a
    reserved key (``RESERVED``, which the recipe gives) left out.

    Raises:
        ValueError: When its class is not registered, an argument is not plain data a recipe can hold, or one has the
            name of a reserved key (``RESERVED``: one a ``**`` parameter took).
    """
    arguments = constructor_arguments(component)
    spec: dict[str, Any] = {"type": type(component).registry_name}  # type: ignore[attr-defined]
    named = inspect.signature(type(component).__init__).parameters
    for name, value in arguments.items():
        if name in DERIVED[kind] or (name in RESERVED[kind] and name in named):
            continue  # a parameter named as the recipe's own key takes what the recipe gives it (a head's labels)
        if name in RESERVED[kind]:
            raise ValueError(
                f"{type(component).__name__}: argument {name}={value!r} has the name of a key a recipe gives the "
                f"{kind} itself ({', '.join(RESERVED[kind])}), so it cannot be written to a recipe; name it otherwise"
            )
        if not is_plain(value):
            raise ValueError(
                f"{type(component).__name__}: argument {name}={value!r} is not plain data (numbers, strings, paths, "
                "booleans, lists and mappings of them), so it cannot be written to a recipe"
            )
        spec[name] = as_written(value)  # a recipe holds a path as its string
    return spec


def is_plain(value: Any) -> bool:
    """Whether ``value`` is what YAML holds: None, bool, number, string, or lists / string-keyed mappings of them; or
    a path, which a recipe holds as its string (``faim.registry.as_written``)."""
    if value is None or isinstance(value, (bool, int, float, str, PurePath)):
        return True
    if isinstance(value, (list, tuple)):
        return all(is_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and is_plain(item) for key, item in value.items())
    return False


def check_tasks(heads: Mapping[str, Any], tasks: Iterable[TaskSpec]) -> list[TaskSpec]:
    """Refuse ``tasks`` that are not one per head of ``heads`` (a model's, by task name), each named as its head, of
    its head's ``task_type`` and with as many labels as its head has classes or labels (``num_classes``,
    ``num_labels``: ``head_sizes``), two for a binary task.

    Returns:
        The tasks as a list, read once: a generator given is used up by the check.

    Raises:
        TypeError: Given one ``TaskSpec``, a string, a mapping or a set (in no fixed order, so that the order of a
            detector's tasks, which its scores, reports and saved ``faim.json`` keep, would change from run to run)
            where the list is expected, or what is no iterable.
        ValueError: Naming the tasks and heads that differ, and what differs.
    """
    if isinstance(tasks, (TaskSpec, str, Mapping, set, frozenset)) or not isinstance(tasks, Iterable):
        given = "one TaskSpec" if isinstance(tasks, TaskSpec) else type(tasks).__name__
        if isinstance(tasks, (set, frozenset)):
            given += ", whose order changes from run to run"
        raise TypeError(
            f"expected a list of TaskSpec, one per head ({', '.join(heads)}), got {given}: pass [TaskSpec(...), ...]"
        )
    tasks = list(tasks)
    names = [task.name for task in tasks]
    unmatched = {
        ("task", "given twice"): sorted({name for name in names if names.count(name) > 1}),
        ("task", "without a head"): [name for name in names if name not in heads],
        ("head", "without a task"): [name for name in heads if name not in names],
    }
    said = [
        f"{plural(len(which), noun)} {what}: {', '.join(map(repr, which))}"
        for (noun, what), which in unmatched.items()
        if which
    ]
    if said:
        raise ValueError(
            f"the tasks do not match the model's heads ({', '.join(heads)}): {'; '.join(said)}; "
            "give one TaskSpec per head, named as its head"
        )
    for task in tasks:
        head = heads[task.name]
        head_type = getattr(head, "task_type", task.type)
        if head_type != task.type:
            raise ValueError(f"task {task.name!r} is {task.type} but its head is {head_type} ({type(head).__name__})")
        if task.type == "binary" and len(task.labels) != 2:
            raise ValueError(
                f"task {task.name!r} is binary but has {plural(len(task.labels), 'label')} {task.labels}; give it two:"
                " (negative, positive)"
            )
        for size, labels in head_sizes(task.type, task.labels).items():
            outputs = getattr(head, size, labels)
            if outputs != labels:
                gives = plural(outputs, "class" if size == "num_classes" else "label")
                raise ValueError(
                    f"task {task.name!r} has {plural(labels, 'label')} but its head gives {gives} ({size}={outputs}); "
                    "give the task one label per output of its head"
                )
    return tasks
