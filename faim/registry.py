"""Component registries: one plain dict per kind, filled by decorators.

Each kind (encoders, fusions, heads, sources) maps a recipe ``type:`` name to a class. A built-in component
registers itself when its package is imported (``faim.encoders``, ``faim.fusion``, ``faim.tasks``,
``faim.data.sources``); ``faim.components`` imports them all and loads the plug-ins of other packages, which
register through the ``faim.plugins`` entry-point group (modules that register on import). Code outside faim
registers through ``faim.register_encoder`` and the others, which ``faim.components`` gives once the built-ins are
registered, so a name a built-in takes is refused there and then rather than when the built-in is imported later.

A class lacking what its kind provides (``PROVIDES``, ``SETS``) is refused when registered, or when built.

A registered class also records the arguments each of its instances was built with
(``constructor_arguments``), so a model composed in code can be written out as a recipe and built again.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import functools
import inspect
import re
import sys
import types
import typing
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import PurePath
from typing import Any, TypeVar

from faim.notices import FaimWarning, warn

T = TypeVar("T", bound=type)

ENCODERS: dict[str, type] = {}
FUSIONS: dict[str, type] = {}
HEADS: dict[str, type] = {}
SOURCES: dict[str, type] = {}

REGISTRIES: dict[str, dict[str, type]] = {
    "encoder": ENCODERS,
    "fusion": FUSIONS,
    "head": HEADS,
    "source": SOURCES,
}

PLUGIN_GROUP = "faim.plugins"

TASK_TYPES = ("binary", "multiclass", "multilabel")
"""The types a task can have, each decided its own way (``faim.decisions.decide``): a head's ``task_type``."""

ELEMENT_MODALITIES = {"text": "text", "comments": "text", "image": "image", "meta": "meta"}
"""The element kinds of a post (``faim.data.elements`` reads them), each with the modality its encoder embeds."""

MODALITIES = tuple(dict.fromkeys(ELEMENT_MODALITIES.values()))
"""The modalities an encoder can embed: an encoder's ``modality``."""

CHOICES: dict[str, dict[str, tuple[Any, ...]]] = {
    "head": {"task_type": TASK_TYPES},
    "encoder": {"modality": MODALITIES},
}
"""Per kind, the class attributes of ``PROVIDES`` with the values they may take; ``register_*`` refuses another."""

PROVIDES: dict[str, dict[str, str]] = {
    "encoder": {
        "modality": "class attribute: 'text', 'image' or 'meta'",
        "preprocessor": "method preprocessor(): the picklable callable turning raw elements into its inputs",
        "identity": "method, which subclassing faim.encoder.Encoder gives",
        "export_assets": "method, which subclassing faim.encoder.Encoder gives",
        "token_embeddings": "method, which subclassing faim.encoder.Encoder gives",
        "forward": "method forward(inputs): [N, output_dim] embeddings, one per element",
    },
    "fusion": {
        "forward": "method forward(elements): {kind: (embeddings, mask)} to [B, output_dim] embeddings",
    },
    "head": {
        "task_type": "class attribute: 'binary', 'multiclass' or 'multilabel'",
        "loss": "method loss(logits, target): the loss over the batch's labelled targets",
        "forward": "method forward(embedding): the logits, which subclassing faim.tasks.base.Head gives",
    },
    "source": {
        "splits": "method splits(): the split names",
        "posts": "method posts(split)",
        "iter_posts": "method iter_posts(path): the posts of one file",
        "describe": "method describe(split): where a split comes from",
        "fingerprint": "method fingerprint(split): a digest of the split's content",
    },
}
"""Per kind, what its class provides besides a constructor, by name, as faim reads it (a module's ``forward`` defined
by a class of its own, not ``torch.nn.Module``'s, which raises ``NotImplementedError`` when the model runs);
the base classes (``faim.encoder.Encoder``, ``faim.tasks.base.Head``, ``faim.data.sources.Source``) say more.
``register_*`` refuses a class lacking one, or leaving one of its methods abstract."""

SETS: dict[str, dict[str, str]] = {
    "encoder": {"output_dim": "the size of each embedding it gives"},
    "fusion": {"output_dim": "the size of the post embedding it gives, which the heads are built for"},
}
"""Per kind, the attributes its constructor sets on each instance; building one that does not is refused."""


class BuildError(ValueError):
    """A component a recipe describes, refused as it was built (``built``): the message starts with its recipe path
    (``model.fusion: ...``, ``data.sources[1]: ...``)."""


class PluginWarning(FaimWarning):
    """A plug-in of ``PLUGIN_GROUP`` failed to load (``faim.components.load_plugins``)."""


class SavedModelWarning(FaimWarning):
    """A saved model is loaded with an argument a new model is refused for (``refuse_new``)."""


def quiet_worker_warnings() -> None:
    """Leave unsaid, in a process started to score, a plug-in that fails to load and what loading the saved model
    warns of: the process that started it loaded both before starting any and said so, once for the run."""
    warnings.simplefilter("ignore", PluginWarning)
    warnings.simplefilter("ignore", SavedModelWarning)


REBUILDING_SAVED: ContextVar[str] = ContextVar("rebuilding_saved", default="")
"""The directory of the saved model whose components are being built (``rebuilding_saved``); ``""`` while a new
model's are."""


@contextlib.contextmanager
def rebuilding_saved(directory: str) -> Iterator[None]:
    """Build, within it, the components of the saved model in ``directory``, which keep what they were trained with:
    an argument only a new model is refused for is warned of instead (``refuse_new``)."""
    token = REBUILDING_SAVED.set(directory)
    try:
        yield
    finally:
        REBUILDING_SAVED.reset(token)


def refuse_new(refusal: str | Exception, saved: str) -> None:
    """Refuse, as a component or its recipe is read, an argument faim came to refuse after models holding it were
    saved: raise ``refusal`` (a ``ValueError`` of it where it is text) for a new model, and for a saved one being
    loaded (``rebuilding_saved``) warn ``saved`` (what it does because of the argument), naming its directory, and
    go on."""
    directory = REBUILDING_SAVED.get()
    if not directory:
        raise refusal if isinstance(refusal, Exception) else ValueError(refusal)
    warn(f"{directory}: {saved}", SavedModelWarning)


def _register(kind: str, name: str) -> Callable[[T], T]:
    """The decorator registering a class as the ``kind`` called ``name`` (``register_encoder`` and the others).

    Raises:
        TypeError: At once, for a ``name`` that is not a non-empty string: the decorator written without its name
            (``@register_encoder`` above the class) would otherwise put a function in the class's place, registering
            nothing.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(
            f"register_{kind} takes the name recipes give the {kind} as type:, as in "
            f"@faim.register_{kind}('my_{kind}') above the class; got {name!r}"
        )
    table = REGISTRIES[kind]

    def decorator(cls: T) -> T:
        if name in table:
            taken = table[name]
            if is_built_in(cls) and not is_built_in(taken):
                raise ValueError(
                    f"{kind} {name!r} is the name of faim's built-in {qualified_name(cls)}, which "
                    f"{qualified_name(taken)} took before it was registered: register {taken.__name__} under "
                    f"another name, with faim.register_{kind}, which refuses a built-in's name there and then"
                )
            raise ValueError(
                f"{kind} {name!r} is already registered, by {qualified_name(taken)}: {qualified_name(cls)} "
                "cannot take its name; register it under another one"
            )
        check_provides(kind, name, cls)
        table[name] = cls
        cls.registry_name = name  # type: ignore[attr-defined]
        _record_arguments(cls, kind)
        return cls

    return decorator


def check_provides(kind: str, name: str, cls: type) -> None:
    """Refuse a class registered as a ``kind`` that lacks what ``PROVIDES`` says the kind provides, gives a class
    attribute a value ``CHOICES`` does not hold, or leaves one of its methods abstract (``abc``).

    Raises:
        TypeError: Naming the kind, ``name``, the class and each thing it lacks, with what that is.
    """
    wanted = PROVIDES[kind]
    missing = [f"{attribute} ({wanted[attribute]})" for attribute in wanted if not provides(cls, attribute)]
    missing += [
        f"{attribute} ({wanted[attribute]}), got {getattr(cls, attribute)!r}"
        for attribute, choices in CHOICES.get(kind, {}).items()
        if hasattr(cls, attribute) and getattr(cls, attribute) not in choices
    ]
    missing += [f"{method} (abstract)" for method in sorted(getattr(cls, "__abstractmethods__", ()))]
    if missing:
        raise TypeError(f"{kind} {name!r}: {qualified_name(cls)} does not provide {', '.join(missing)}")


def provides(cls: type, attribute: str) -> bool:
    """Whether ``cls`` has ``attribute`` of its own or its bases' other than ``torch.nn.Module`` (whose ``forward``
    only raises ``NotImplementedError``). torch is not imported for it: a module class is defined with torch imported.
    """
    torch = sys.modules.get("torch")
    placeholder = getattr(torch.nn.Module, attribute, None) if torch is not None else None
    return hasattr(cls, attribute) and (placeholder is None or getattr(cls, attribute) is not placeholder)


def is_built_in(cls: type) -> bool:
    """Whether ``cls`` is one of faim's own components (defined in a module of the ``faim`` package), which
    ``faim.registry``'s decorators register as it is imported, after any class another module registered before."""
    return cls.__module__.split(".")[0] == "faim"


def interactive_session() -> bool:
    """Whether this process runs an interactive session (a notebook, ``python -c``): a ``__main__`` without a file,
    which a spawned process (a DataLoader's or a scoring run's worker) cannot import."""
    return getattr(sys.modules.get("__main__"), "__file__", None) is None


def defined_interactively(cls: type | Callable[..., Any]) -> bool:
    """Whether the class or function ``cls`` was defined in an interactive session (``interactive_session``), in its
    ``__main__``, so that a spawned process cannot find it."""
    return getattr(cls, "__module__", None) == "__main__" and interactive_session()


def qualified_name(cls: type | Callable[..., Any]) -> str:
    """``module.Class`` of the class ``cls`` (``module.function`` of a function)."""
    return f"{cls.__module__}.{cls.__qualname__}"


def _record_arguments(cls: type, kind: str) -> None:
    """Make ``cls`` keep, on each instance of exactly ``cls``, the arguments its constructor was called with (those a
    ``**`` parameter takes by their own names, as a recipe gives them), and refuse an instance that its constructor
    left without an attribute ``SETS`` says a ``kind`` sets.

    The constructor raises ``ValueError`` naming the class and the attribute it did not set.
    """
    init = cls.__init__
    signature = inspect.signature(init)
    keywords = next((p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None)

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if type(self) is cls:  # a subclass records its own arguments when it is registered itself
            unset = [f"{name} ({what})" for name, what in SETS.get(kind, {}).items() if not hasattr(self, name)]
            if unset:
                raise ValueError(f"{qualified_name(cls)} does not set {', '.join(unset)} when built")
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(signature.parameters)))
            if keywords is not None:
                arguments |= arguments.pop(keywords)
            self.__dict__["_faim_arguments"] = arguments

    cls.__init__ = __init__  # type: ignore[misc]


def recorded_arguments(component: object) -> dict[str, Any] | None:
    """The arguments ``component`` was built with (defaults filled in), by parameter name; ``None`` when its class is
    not itself registered, so they were not recorded."""
    arguments = getattr(component, "__dict__", {}).get("_faim_arguments")
    if arguments is None or "registry_name" not in type(component).__dict__:
        return None
    return dict(arguments)


def constructor_arguments(component: object) -> dict[str, Any]:
    """The arguments ``component`` was built with (defaults filled in), by parameter name (``recorded_arguments``).

    Raises:
        ValueError: When its class is not itself registered, so the arguments were not recorded.
    """
    arguments = recorded_arguments(component)
    if arguments is None:
        raise ValueError(
            f"{type(component).__name__} is not a registered component (register it with faim.register_encoder, "
            "register_fusion or register_head), so the arguments it was built with are unknown"
        )
    return arguments


def register_encoder(name: str) -> Callable[[T], T]:
    """Register an encoder class under ``name`` (its recipe ``type:``)."""
    return _register("encoder", name)


def register_fusion(name: str) -> Callable[[T], T]:
    """Register a fusion class under ``name`` (its recipe ``type:``)."""
    return _register("fusion", name)


def register_head(name: str) -> Callable[[T], T]:
    """Register a task head class under ``name`` (its recipe ``type:``)."""
    return _register("head", name)


def register_source(name: str) -> Callable[[T], T]:
    """Register a data source class under ``name`` (its recipe ``data.type:``)."""
    return _register("source", name)


def suggest(name: str, choices: list[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def a_type(value: Any) -> str:
    """The type of ``value`` with its article, as a message names it (``article``): ``"an int"``, ``"a list"``,
    ``"an XLMRobertaConfig"``, ``"a uint8"``; ``"None"`` for ``None``."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{article(name)} {name}"


LETTERS_READ_WITH_A_VOWEL = "AEFHILMNORSX"
"""The capitals whose names are said beginning with a vowel (an F, an H, an X)."""
SAID_YOU = re.compile(r"u(int|ni(?![nm])|nary|net(?![a-z])|[^aeioun\d_][aeiou])", re.IGNORECASE)
"""The start of a name whose "u" is said "you": ``uint8``, ``Unicode``, ``Union``, ``UnaryOp``, ``Unet``,
``UserDict``, ``ufunc`` (not ``Unpickler``, ``Unexpected``, ``Unordered``, ``Uninitialized``)."""


def article(name: str) -> str:
    """``"a"`` or ``"an"`` before a type's name, as the name is said: one beginning with an acronym (two capitals,
    or a capital and a digit: ``XLMRobertaConfig``, ``HTTPResponse``, ``UUID``, ``T5Config``) and numpy's ``nd``
    names letter by letter (an XLM, an HTTP, an ndarray, but a UUID); any other as a word, by its first letter, a
    "u" said "you" taking "a" (``SAID_YOU``: a uint8, a UnicodeDecodeError)."""
    if name[:2].isupper() or name.startswith("nd"):
        return "an" if name[0].upper() in LETTERS_READ_WITH_A_VOWEL else "a"
    return "an" if name[:1].lower() in "aeiou" and not SAID_YOU.match(name) else "a"


def lookup(kind: str, name: str, where: str = "") -> type:
    """Return the class registered as ``name``; raise KeyError naming the valid choices.

    Only what is registered so far is found: ``faim.components.lookup`` registers the built-ins and plug-ins first.
    """
    table = REGISTRIES[kind]
    if name not in table:
        choices = sorted(table)
        prefix = f"{where}: " if where else ""
        raise KeyError(f"{prefix}unknown {kind} type {name!r}{suggest(name, choices)}; valid: {', '.join(choices)}")
    return table[name]


def type_hints(annotated: Any) -> dict[str, Any]:
    """Each annotated name of a class or function → its annotation (``typing.get_type_hints``). Where one names what
    cannot be imported here (a plug-in annotating with a name imported only for type checkers), each of its own
    annotations is resolved alone, as ``get_type_hints`` resolves it, in the globals of the function (of the one it
    wraps, where it wraps one; of a class, of its module), and only those that cannot be are left out."""
    try:
        return typing.get_type_hints(annotated)
    except (NameError, TypeError):
        pass
    names = getattr(inspect.unwrap(annotated), "__globals__", None) or vars(sys.modules[annotated.__module__])
    hints = {}
    for name, annotation in inspect.get_annotations(annotated).items():
        alone = types.SimpleNamespace(__annotations__={name: annotation}, __globals__=names)
        with contextlib.suppress(NameError, TypeError):
            hints |= typing.get_type_hints(alone)
    return hints


def as_annotated(value: Any, annotation: Any) -> Any:
    """``value``, given for an argument annotated ``annotation``, as the annotation asks for it: a string where it
    asks for a path made that path, a path class (``Path``, any ``PurePath``), alone or with ``None``
    (``Path | None``), a list or tuple where it asks for a tuple made a tuple (a recipe's YAML holds one as a list)
    and where it asks for a list a list (a recipe given in code may give a tuple); the same for the items of a
    ``list``, ``Sequence`` or ``tuple`` (``item_annotations``) and the values of a ``dict`` or ``Mapping``
    (``entry_annotations``), at any depth (``list[Path]``, ``tuple[Path, int]``, ``dict[str, list[Path]] | None``).
    A list or tuple so annotated is given back new, of the kind asked for (of its own for a ``Sequence``), a mapping
    as a new ``dict``; any other value as it is, as is a value for an annotation of more types than one besides
    ``None`` (``str | Path`` takes a string as it is), but a list, tuple or mapping, which is read as the member of
    the union it fits (``member_fitted``: ``list[int] | tuple[str, str]`` makes ``["a", "b"]`` a tuple)."""
    members = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
    if isinstance(value, (list, tuple, dict)):
        members = member_fitted(value, members)
    if len(members) != 1:
        return value
    (asked,) = members
    if isinstance(asked, type) and issubclass(asked, PurePath):
        return asked(value) if isinstance(value, str) else value
    entries = entry_annotations(asked)
    if isinstance(value, dict) and entries is not None:
        return {key: as_annotated(item, entries[1]) for key, item in value.items()}
    items = item_annotations(asked, len(value)) if isinstance(value, (list, tuple)) else None
    if items is not None:
        made = [as_annotated(item, each) for item, each in zip(value, items)]
        kind = sequence_kind(asked)
        return type(value)(made) if kind is Sequence else kind(made)
    return value


def member_fitted(value: list[Any] | tuple[Any, ...] | dict[Any, Any], members: list[Any]) -> list[Any]:
    """Of the ``members`` of a union (``None`` left out) given a list or tuple (a mapping), those ``value`` is read
    as: the first of the sequences' annotations (the mappings') that it fits (``type_matches``); where it fits none,
    every one of them, or every member where none is one (the caller reads ``value`` as a member only where one is
    left)."""
    of_kind = sequence_kind if isinstance(value, (list, tuple)) else entry_annotations
    alike = [member for member in members if of_kind(member) is not None]
    return next(([member] for member in alike if type_matches(value, member)), alike) or members


def sequence_kind(annotation: Any) -> type | None:
    """The kind of sequence ``annotation`` asks for, ``list``, ``tuple`` or ``Sequence``, with its item types
    (``list[int]``, ``typing.Tuple[int, int]``) or without (``list``, ``typing.List``); ``None`` for any other."""
    kind = typing.get_origin(annotation) or annotation
    return kind if kind in (list, tuple, Sequence) else None


def item_annotations(annotation: Any, count: int) -> list[Any] | None:
    """The annotation of each of ``count`` items given for ``annotation``: ``X`` for each where it is ``list[X]``,
    ``Sequence[X]`` or ``tuple[X, ...]``, ``Any`` for each where it names no item types (``tuple``,
    ``typing.List``: items of any type), and the types in order where it is a tuple of one type per item
    (``tuple[Path, int]``) with ``count`` of them; ``None`` for a tuple of another length, and for an annotation
    that is not a sequence's (``sequence_kind``)."""
    kind = sequence_kind(annotation)
    if kind is None:
        return None
    if not hasattr(annotation, "__args__"):  # no item types named: typing.get_args gives () here as for tuple[()]
        return [Any] * count
    args = typing.get_args(annotation)
    if kind is tuple and args[-1:] != (Ellipsis,):
        return list(args) if len(args) == count else None
    return [args[0]] * count


def entry_annotations(annotation: Any) -> tuple[Any, Any] | None:
    """The annotations of the keys and of the values of a mapping given for ``annotation``: ``(K, V)`` where it is
    ``dict[K, V]`` or ``Mapping[K, V]`` (``typing.Mapping`` too), ``(Any, Any)`` where it names no item types
    (``dict``, ``typing.Dict``); ``None`` for an annotation that is not a mapping's."""
    kind = typing.get_origin(annotation) or annotation
    if kind not in (dict, Mapping):
        return None
    return typing.get_args(annotation) or (Any, Any)


def type_matches(value: Any, annotation: Any) -> bool:
    """Whether a YAML value fits an annotation (``int``, ``float``, ``str``, ``bool``, ``X | None``, ``list[X]``,
    ``Sequence[X]``, ``tuple[X, ...]`` or ``tuple[X, Y]`` (one type per item: ``item_annotations``),
    ``dict[K, V]`` or ``Mapping[K, V]`` (a dict, as a recipe holds plain data: one is written out as YAML), its keys
    and values each checked (``entry_annotations``), any of those without its item types (``tuple``,
    ``typing.Dict``: items of any type), a class); ints are accepted for floats, a string or a path for a path
    (``Path``: a recipe holds a path as its string, as ``faim.components.component_spec`` writes one, and the builder
    makes it the path again: ``annotated_arguments``), and any value for an annotation of another kind, which YAML
    values are not checked against."""
    if annotation is Any:
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(type_matches(value, arg) for arg in typing.get_args(annotation))
    if sequence_kind(annotation) is not None:  # a list as YAML holds one, or a tuple a recipe given in code keeps
        items = item_annotations(annotation, len(value)) if isinstance(value, (list, tuple)) else None
        return items is not None and all(type_matches(v, item) for v, item in zip(value, items))
    entries = entry_annotations(annotation)
    if entries is not None:
        key, item = entries
        return isinstance(value, dict) and all(type_matches(k, key) and type_matches(v, item) for k, v in value.items())
    if annotation is type(None):
        return value is None
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return isinstance(value, (str, PurePath))
    return isinstance(value, annotation) if isinstance(annotation, type) and origin is None else True


def annotated_arguments(cls: type, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` for ``cls``'s constructor, each as its parameter's annotation asks for it (``as_annotated``): a
    recipe holds a path as its string, and a tuple as a list where it comes from YAML."""
    hints = type_hints(cls.__init__)
    return {name: as_annotated(value, hints[name]) if name in hints else value for name, value in arguments.items()}


def as_written(value: Any, keep_tuples: bool = False) -> Any:
    """A copy of a recipe value (an argument a component was built with, a recipe section) with each path in it (a
    ``PurePath``, which an argument ``annotated_arguments`` made a path takes) as its string, and each tuple as a
    list, as YAML holds them; with ``keep_tuples``, each tuple kept a tuple (a recipe given in code builds its
    components with the tuples it gives them)."""
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, dict):
        return {key: as_written(item, keep_tuples) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [as_written(item, keep_tuples) for item in value]
        return tuple(items) if keep_tuples and isinstance(value, tuple) else items
    return copy.deepcopy(value)


def built(where: str, make: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``make(*args, **kwargs)`` (a component's class, or a check of one), a value it refuses (its ``ValueError``, or
    torch's ``RuntimeError`` for a size it cannot make) named by the recipe path ``where`` of the component, and an
    argument refused on the way (a ``TypeError``, such as a misspelt key that a constructor taking ``**options``
    passes on to a call that does not take it) named by that path and by ``make``. A ``BuildError`` ``make`` raises
    names a member it builds (a ``concat`` source's) by that member's own path, and comes through as it is.

    Raises:
        BuildError: ``"where: message"``, or ``"where: module.Class: message"`` for a ``TypeError``; the error raised
            is its cause.
    """
    try:
        with refusals_named(where, (ValueError, RuntimeError)):
            return make(*args, **kwargs)
    except TypeError as error:
        raise BuildError(f"{where}: {qualified_name(make)}: {error}") from error


@contextlib.contextmanager
def refusals_named(where: str, refusals: tuple[type[Exception], ...] = (ValueError,)) -> Iterator[None]:
    """Run the block, an error of the types in ``refusals`` it raises (a value of the recipe refused) re-raised named
    by the recipe path ``where`` of the component the block builds or fits. A ``BuildError`` names its own path and
    comes through as it is, as does any other error (a ``RuntimeError`` of a fit running out of memory, a bug): it
    is not the recipe's.

    Raises:
        BuildError: ``"where: message"``, the error raised its cause.
    """
    try:
        yield
    except BuildError:
        raise
    except refusals as error:
        raise BuildError(f"{where}: {error}") from error


BUILDING_SOURCE: ContextVar[str] = ContextVar("building_source", default="")
"""The recipe path of the data source being built (``build_source_spec``), which its members' paths extend."""


def member_path(relative: str) -> str:
    """The recipe path of a member at ``relative`` to the data source being built (``sources[1]`` of the ``concat`` at
    ``data.source``: ``data.source.sources[1]``); ``relative`` itself where no source is being built."""
    parent = BUILDING_SOURCE.get()
    return f"{parent}.{relative}" if parent else relative


def source_path() -> str:
    """The recipe path of the data source being built (``data``, ``data.sources[1]``), for it to name its own keys in
    its errors (``data.sources[1].validation: ...``); ``data`` where none is being built (a source made in Python)."""
    return BUILDING_SOURCE.get() or "data"


def build_source_spec(spec: dict[str, Any], where: str) -> Any:
    """The data source a ``type:`` mapping names (a recipe's ``data:`` section, or a member ``concat`` or ``without``
    wraps), built (``built``) with the mapping's other keys, each as its annotation asks for it
    (``annotated_arguments``: a path given as its string made a path); ``where``, the mapping's recipe path (a
    member's from ``member_path``), names it in an error naming a source no registry holds or one its class raises
    as it is built, and is the path its members extend."""
    cls = lookup("source", spec["type"], where)
    building = BUILDING_SOURCE.set(where)
    try:
        arguments = {key: value for key, value in spec.items() if key != "type"}
        return built(where, cls, **annotated_arguments(cls, arguments))
    finally:
        BUILDING_SOURCE.reset(building)
