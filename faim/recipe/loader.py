"""Read a recipe: YAML (safe loader only), at most one level of ``base:``, and ``--set`` overrides."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from faim.artifact_manifest import MANIFEST, RECIPE
from faim.recipe.errors import RecipeError
from faim.recipe.sections import DEFAULTED_KEYS, MODEL_KEYS, SECTIONS
from faim.recipe.validate import validate
from faim.registry import a_type, refuse_new
from faim.wording import shell_path
from faim.yaml_reader import parse_yaml, yaml_problem

SHIPPED = files("faim.recipes")


@dataclass(frozen=True)
class Base:
    """A recipe's base as it was read with the recipe: its file and the mapping it writes (``base_of``)."""

    file: Path
    data: dict[str, Any]


@dataclass(frozen=True)
class Written:
    """A recipe as its file or mapping writes it (``data``, its ``base:`` included), with the base its ``base:``
    names as it was read with it (``base``; ``None`` where it names none). Reading the recipe and using it name where a
    key was set by these (``in_base``), never by the files again, so an error names what set its key when the recipe
    was read, whatever became of the base's file since."""

    data: dict[str, Any]
    base: Base | None = None


def shipped_recipes() -> list[str]:
    """Names (without ``.yaml``) of the recipes shipped with faim."""
    return sorted(p.name[: -len(".yaml")] for p in SHIPPED.iterdir() if p.name.endswith(".yaml"))


def locate(name_or_path: str | Path) -> Path:
    """A recipe file path, or the path of a shipped recipe given by name (``hate_text_frozen``, even where a folder
    of that name is at hand).

    Raises:
        RecipeError: Naming a folder given (a saved model's: saying to give the recipe file it holds), or what is
            neither a file nor a shipped recipe (naming those shipped).
    """
    path = Path(name_or_path)
    if path.exists() and not path.is_dir():
        return path
    if (shipped := shipped_file(str(name_or_path))) is not None:
        return shipped
    if path.is_dir():
        if (path / MANIFEST).is_file() and (path / RECIPE).is_file():
            raise RecipeError(str(path), "", f"a saved model, not a recipe; give its recipe, {path / RECIPE}")
        raise RecipeError(str(path), "", "a folder, not a recipe; give a recipe file or a shipped recipe's name")
    raise RecipeError(
        str(name_or_path), "", f"no such file, nor a shipped recipe; shipped: {', '.join(shipped_recipes())}"
    )


def shipped_file(name: str) -> Path | None:
    """The file of the recipe shipped as ``name`` (``.yaml`` or not); ``None`` where none is."""
    name = name.removesuffix(".yaml")
    return Path(str(SHIPPED / f"{name}.yaml")) if name in shipped_recipes() else None


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        data = parse_yaml(text)
    except yaml.YAMLError as error:
        raise RecipeError(str(path), "", f"invalid YAML {yaml_problem(error, text)}") from error
    except UnicodeDecodeError as error:
        raise RecipeError(str(path), "", f"not UTF-8 text (byte {error.start + 1})") from None
    if not isinstance(data, dict):
        said = f"holds {null_held(text)}; " if data is None else ""
        raise RecipeError(str(path), "", f"{said}a recipe must be a YAML mapping with data, model, train and eval")
    return data


def null_held(text: str) -> str:
    """What the YAML ``text``, read as null, holds, as an error says it: ``nothing (no key, or comments alone)``, or
    the null it writes (``null alone (YAML's null), no key``, as ``yaml.safe_dump(None)`` writes it; ``~`` too)."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if node is not None and node.value:
        return f"{node.value} alone (YAML's null), no key"
    return "nothing (no key, or comments alone)"


def merge(
    base: dict[str, Any], override: dict[str, Any], dropped: list[tuple[str, ...]], at: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Recursive dict merge; mappings merge key by key, anything else replaces.

    A component whose ``type:`` changes is replaced whole, so keys of the old type do not leak in, and an empty
    mapping of a model's heads or encoders (a place of ``DROPPABLE``) replaces the base's, leaving none, as ``--set
    model.heads={}`` does. A ``null`` value removes what ``drops`` says it does, as ``--set KEY=null`` does (a child
    recipe drops an encoder with ``image: null``, a head the base has not too); each key of ``base`` one removes is
    added to ``dropped`` as its keys from the top (``at``: those of ``base`` itself, ``("model",)`` where it is a
    recipe's model section). Any other null is kept, for
    validation to judge as a null written without a base: ``data.columns.comments: null`` reads no comments, a
    ``train:`` key's takes its default (``resolve``), a mistyped key's (``trian: null``) is refused as unknown, and a
    null ``data:`` or ``model:`` as what it should be.
    """
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if value is None and drops((*at, key), merged):
            if key in merged:
                dropped.append((*at, key))
            merged.pop(key, None)
            continue
        old = merged.get(key)
        merges = (
            isinstance(old, dict)
            and isinstance(value, dict)
            and old.get("type") == value.get("type", old.get("type"))
            and (value != {} or (*at, key) not in DROPPABLE)
        )
        merged[key] = merge(old, value, dropped, (*at, key)) if merges else copy.deepcopy(value)
    return merged


TRAIN_PATH_KEYS = frozenset({("train", "output_dir"), ("train", "cache_dir")})
DATA_PATH_KEYS = frozenset({"root", "image_root", "path", "train", "validation", "test"})


def overrides_a_path(keys: list[str]) -> bool:
    """Whether an override's ``keys`` (from the top of a recipe) name a folder or a file: ``train.output_dir``,
    ``train.cache_dir``, or a ``root``, ``image_root``, ``path`` or split of a ``data:`` source, at any depth (the
    wrapped source of a ``without`` source, ``data.source.test``)."""
    return tuple(keys) in TRAIN_PATH_KEYS or (
        keys[0] == "data" and keys[-1] in DATA_PATH_KEYS and "columns" not in keys  # not a column a field is read from
    )


def empty_paths(keys: list[str], value: Any) -> list[str]:
    """Where ``value``, given at ``keys`` (from the top of a recipe), is ``""`` at a key naming a folder or a file
    (``overrides_a_path``), in it or in a mapping or list it holds (``train={output_dir: ""}``, ``data={...,
    sources: [{root: ""}]}``): each such key, in the order written, as ``--set`` would write it
    (``data.sources[0].root``)."""
    if value == "" and overrides_a_path(keys):
        return [".".join(keys)]
    if isinstance(value, dict):
        inner = [([*keys, str(child)], held) for child, held in value.items()]
    elif isinstance(value, list):
        inner = [([*keys[:-1], f"{keys[-1]}[{index}]"], held) for index, held in enumerate(value)]
    else:
        return []
    return [found for at, held in inner for found in empty_paths(at, held)]


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"train.max_epochs=3"`` → (``["train", "max_epochs"]``, ``3``); the value is parsed as YAML. A key may not
    index a list (``data.sources[1].task``) nor be empty (``train..lr``). An empty value, which YAML reads as null,
    is refused where the key names a folder or a file (``overrides_a_path``), as is ``""`` there or at such a key in a
    mapping given (``empty_paths``), naming that key: it is most often a variable not set (``--set
    train.output_dir=$OUT``), which would train into the default folder, or read the working directory; ``null`` says
    null."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise RecipeError("--set", text, "expected KEY.PATH=VALUE")
    if "[" in key:
        raise RecipeError(
            "--set",
            key.strip(),
            "cannot index a list; write a recipe with base: NAME and the list of your own (faim recipe show NAME"
            " prints it to start from)",
        )
    keys = key.strip().split(".")
    if not all(keys):
        raise RecipeError("--set", key.strip(), "a key is empty (two dots together, or one at an end); name each key")
    try:
        parsed = parse_yaml(value) if value.strip() else None
    except yaml.YAMLError as error:
        raise RecipeError(
            "--set", key.strip(), f"the value {value!r} is not YAML {yaml_problem(error, value)}"
        ) from None
    empty = [".".join(keys)] if overrides_a_path(keys) and not value.strip() else empty_paths(keys, parsed)
    if empty:
        raise empty_path_refusal("--set", empty[0])
    return keys, parsed


def empty_path_refusal(source: str, key: str) -> RecipeError:
    """The error refusing ``""`` at ``key``, which names a folder or a file (``empty_paths``), as ``source``
    (``--set``, a recipe file) gave it: it offers ``.`` for the working folder, which ``Path("")`` is and which a
    recipe file's ``""`` was read as, as ``null`` may mean another (``image_root: null``: each data file's folder)."""
    return RecipeError(
        source,
        key,
        "an empty value (a variable not set?) names no folder or file; name one (. for the working folder), or write"
        " null for none or the default",
    )


def removable(keys: tuple[str, ...]) -> bool:
    """Whether a null written at ``keys`` (from the top of a recipe) may remove what is there: anywhere but at the
    top, where only a section with defaults (``DEFAULTED_KEYS``) may be removed, to take them; a null ``data:`` or
    ``model:`` is kept, for validation to refuse as what it should be, as in a recipe without a base."""
    return len(keys) > 1 or keys[0] in DEFAULTED_KEYS


def drops(keys: tuple[str, ...], node: dict[str, Any]) -> bool:
    """Whether a null written at ``keys`` (from the top of a recipe), in a child recipe or by ``--set``, removes what
    ``node``, the mapping holding its last key, has there rather than being kept as the key's value: a head or an
    encoder, held or not (``DROPPABLE``); or a mapping held (a component, a ``train:`` or ``eval:`` section, a
    source's ``columns:``). Never a ``data:`` or ``model:`` section (``removable``). Any other null is kept, as in a
    recipe without a base: where null means something (``data.columns.comments: null`` reads no comments), at a key
    of ``train:`` or ``eval:`` (which then takes its default, ``resolve``), where a value is needed (refused) and at
    a mistyped key (refused as unknown)."""
    if not removable(keys):
        return False
    return keys[:-1] in DROPPABLE or isinstance(node.get(keys[-1]), dict)


# Where a null override drops the key whatever its value: a head, or an encoder (one reading another's by name too)
DROPPABLE = {("model", "heads"), ("model", "encoders")}

# The change that left none of the components at a place of DROPPABLE, as an error names it: the --set that made it
# ("" for the recipe as written), the key it wrote and how it left none ("dropping head 'hate'")
Cause = tuple[str, str, str]


def apply_overrides(
    recipe: dict[str, Any], overrides: list[str], emptied: dict[tuple[str, str], Cause | None] | None = None
) -> dict[str, Any]:
    """Apply ``--set a.b=c`` overrides in order; intermediate mappings are created as needed (where a null is too).
    Setting a component's ``type:`` to another type replaces the component whole, as ``base:`` merging does, so its
    other keys are set by overrides after that one; one given before it, which the replacement would drop, is
    refused. A null value (``model.heads.hate=null``, or nothing after ``=``) removes what ``drops`` says it does, as a
    null in a child recipe does (``merge``): a head, an encoder, a mapping held but a section without defaults; any
    other key is set null, as where null means something (``data.columns.comments=null``: the comments are not
    read; ``train.lr=null`` takes the default, ``resolve``), and validation refuses a null where the key is unknown
    (a mistyped one) or needs a value, or a null ``data:`` or ``model:``. Each
    override that leaves none of the components at a place of ``DROPPABLE`` which held some is put in ``emptied``,
    where given, at that place: its ``Cause``, or ``None`` where it set another key (``model=...``, which validation
    names).

    Raises:
        TypeError: Given one override as a string, saying to pass a list.
        RecipeError: Naming an override that sets a key inside a value that is not a mapping, or one that a later
            change of its component's type would drop.
    """
    if isinstance(overrides, str):
        raise TypeError(f"overrides: expected a list of KEY.PATH=VALUE strings, got one string: pass [{overrides!r}]")
    result = copy.deepcopy(recipe)
    given: list[tuple[tuple[str, ...], Any, str]] = []  # each override applied: its keys, its value, its text
    for text in overrides:
        keys, value = parse_override(text)
        held = [place for place in DROPPABLE if not leaves_none(result, *place)]
        node = result
        for depth, key in enumerate(keys[:-1]):
            if node.get(key) is None:  # none there, or a null an earlier override left (--set data=null)
                node[key] = {}
            child = node[key]
            if not isinstance(child, dict):
                raise RecipeError("--set", ".".join(keys[: depth + 1]), f"is {a_type(child)}, not a mapping")
            node = child
        if keys[-1] == "type" and node.get("type", value) != value:
            component = tuple(keys[:-1])
            if dropped := [earlier for path, given_value, earlier in given if gave(path, given_value, component)]:
                raise RecipeError(
                    "--set",
                    ".".join(keys),
                    f"replaces the component whole, dropping what --set {dropped[0]} gave it; give its keys after "
                    "its type",
                )
            node.clear()
        if value is None and drops(tuple(keys), node):
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
        given.append((tuple(keys), value, text))
        for place in held:
            if emptied is not None and leaves_none(result, *place):  # one setting model=... is left to validation
                cause = (f"--set {text}", ".".join(keys), dropping(place[1], keys[2:], value))
                emptied[place] = cause if keys[:2] == list(place) else None
    return result


def gave(keys: tuple[str, ...], value: Any, component: tuple[str, ...]) -> bool:
    """Whether an override setting ``keys`` to ``value`` gave ``component`` (its keys) a key other than its type: a key
    inside it, or a mapping of it, or of a section holding it, holding one (a type given before is replaced by the
    new one, as a repeated ``--set`` is)."""
    if keys[: len(component)] == component and len(keys) > len(component):
        return keys[len(component) :] != ("type",)
    if component[: len(keys)] != keys:
        return False
    node = value
    for key in component[len(keys) :]:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return isinstance(node, dict) and bool(set(node) - {"type"})


def override_at(path: str, overrides: list[str]) -> str | None:
    """The last of ``overrides`` (``KEY.PATH=VALUE``) that set the YAML ``path``, a key inside it or a section
    holding it; ``None`` when none did."""
    for text in reversed(overrides):
        key = text.partition("=")[0].strip()
        if key == path or path.startswith((f"{key}.", f"{key}[")) or key.startswith(f"{path}."):
            return text
    return None


def dotted_key_remedy(error: RecipeError, text: str) -> str:
    """What ``error`` adds where its key takes a mapping (``RecipeError.takes_mapping``) and the override ``text`` that
    set it goes two or more keys below it (``train.augment.text.char_swap=0.25``, refused at ``train.augment``):
    ``--set`` reads each dot as a key inside the one before, so a key holding a dot (a perturbation's name) is given
    in a mapping written whole (``--set 'train.augment={text.char_swap: 0.25}'``); ``""`` for any other error or
    override (a misspelt key, one taking a number or a list: the mapping would be refused too)."""
    path = error.path
    key, _, value = text.partition("=")
    below = key.strip().removeprefix(f"{path}.")
    if not error.takes_mapping or below == key.strip() or "." not in below:
        return ""
    return (
        f"; --set reads each dot as a key inside the one before: to give {path} the key {below}, write its whole"
        f" value as a mapping: --set '{path}={{{below}: {value.strip()}}}'"
    )


def load_recipe_dict(
    name_or_path: str | Path, overrides: list[str] | None = None
) -> tuple[dict[str, Any], Path, Written]:
    """The merged recipe mapping (base applied, overrides applied), its file path, and the recipe as its file writes
    it with its base as read (``Written``)."""
    path = locate(name_or_path)
    data = read_yaml(path)
    written = Written(data, base_of(data, str(path), path.parent))
    return labels_as_words(resolve(written, str(path), overrides or [])), path, written


def resolve(written: Written, source: str, overrides: list[str]) -> dict[str, Any]:
    """The recipe ``written`` (``source`` names it in errors) merged onto its base with ``overrides`` applied
    (``apply_overrides``). A section with defaults left null (``train:`` with nothing under it, ``--set
    train=null``; ``DEFAULTED_KEYS``), or a key of one, whatever the base sets there, is left for reading the recipe
    to take its default (``taking_defaults``); a null ``data:`` or ``model:``,
    written or by ``--set``, with a base or without, is left to validation, which says what it should be
    (``removable``).

    Raises:
        RecipeError: Naming the file that writes it (the base's where the base does, ``in_base``), for ``""`` at a key
            naming a folder or a file (``empty_paths``; ``data: {type: jsonl, train: ""}``), which would read or write
            the working folder, as ``--set`` refuses it (``parse_override``), the first where there are several; a saved
            model's recipe holding any is warned of once, naming each (``faim.registry.refuse_new``). Also where
            the recipe or ``overrides`` leave the model without heads or without encoders which its base or an earlier
            override gave it, naming the recipe file, the override where one did, the key and how: a null dropping the
            last (``model.heads.NAME: null``), a null for them all (``model.heads: null``) or an empty mapping
            (``model.heads: {}``). A recipe that never gave any is left to validation, which says they are missing, and
            so is one holding a key a recipe has not on the way to them (``stray_key``: a head indented under
            ``model:``, leaving ``heads:`` null), which validation names first.
    """
    dropped: list[tuple[str, ...]] = []
    data, base = written.data, None if written.base is None else written.base.data
    own = {key: value for key, value in data.items() if key != "base"}
    merged = merge(base, own, dropped) if base is not None else own
    held = [place for place in DROPPABLE if base is not None and not leaves_none(base, *place)]
    emptied = {place: written_cause(data, dropped, place) for place in held if leaves_none(merged, *place)}
    resolved = apply_overrides(merged, overrides, emptied)
    if empty := empty_paths([], resolved):  # an override giving one is refused as it is parsed: the file's or base's
        refusal = in_base(empty_path_refusal(source, empty[0]), written, resolved)
        values = "an empty value" if len(empty) == 1 else "empty values"
        taken = "taken as the working folder, as the model was trained with it"
        refuse_new(refusal, f"{', '.join(empty)}: {values}, {taken}")
    for section, kind in sorted(DROPPABLE):  # encoders first, as validation checks them
        cause = emptied.get((section, kind)) if leaves_none(resolved, section, kind) else None
        if cause is not None and not stray_key(resolved):
            by, key, how = cause
            where = f"{source}: {by}" if by else source
            raise RecipeError(where, key, f"{how} leaves the model without {kind}; keep one or give one of its own")
    return resolved


def python_values(value: Any) -> Any:
    """``value``, a recipe mapping given in Python or a value in it, with each numpy (or torch) number or array in it as
    the Python number or list it holds (``tolist``), so that a weight computed with numpy (``np.float64(2.0)``, an
    array of class weights) is validated, built with and written to YAML as the number or list it is; tuples are kept
    tuples, anything else as it is."""
    if isinstance(value, dict):
        return {key: python_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [python_values(item) for item in value]
    if isinstance(value, tuple):  # a named tuple too, which validation reads as the tuple it is
        return tuple(python_values(item) for item in value)
    if hasattr(value, "dtype") and hasattr(value, "tolist") and not isinstance(value, type):  # not np.float32 itself
        return value.tolist()
    return value


def taking_defaults(recipe: dict[str, Any]) -> dict[str, Any]:
    """``recipe`` without a section with defaults left null (``train:`` with nothing under it, ``--set train=null``;
    ``DEFAULTED_KEYS``) nor a null at a key of one (``defaulted``), so that each takes its default: how every recipe
    mapping is read (``faim.recipe.Recipe.from_dict``), from a file, with a base or without, by ``--set`` or given in
    Python alike. A null ``data:`` or ``model:`` is kept, for validation to say what it should be."""
    kept = {key: value for key, value in recipe.items() if value is not None or key not in DEFAULTED_KEYS}
    return {key: defaulted(key, value) for key, value in kept.items()}


def defaulted(section: str, value: Any) -> Any:
    """``value``, the recipe's ``section``, without its nulls at keys that take a default (``DEFAULTED_KEYS``:
    ``train: {seed: null}`` takes the default seed, whatever the base sets); any other value as it is."""
    if section not in DEFAULTED_KEYS or not isinstance(value, dict):
        return value
    return {key: item for key, item in value.items() if item is not None or key not in DEFAULTED_KEYS[section]}


def stray_key(recipe: dict[str, Any]) -> bool:
    """Whether ``recipe`` holds a key no recipe has at its top or in its ``model:`` section, which validation refuses
    as unknown."""
    node = recipe.get("model")
    return bool(set(recipe) - set(SECTIONS)) or (isinstance(node, dict) and bool(set(node) - set(MODEL_KEYS)))


def components_of(recipe: dict[str, Any], section: str, kind: str) -> Any:
    """What ``recipe`` holds at ``section.kind`` (``model.heads``); ``None`` where a mapping on the way is not one."""
    node = recipe.get(section)
    return node.get(kind) if isinstance(node, dict) else None


def leaves_none(recipe: dict[str, Any], section: str, kind: str) -> bool:
    """Whether ``recipe`` holds no component at ``section.kind``: an empty mapping, a null, or no key there."""
    return components_of(recipe, section, kind) in (None, {})


def written_cause(data: dict[str, Any], dropped: list[tuple[str, ...]], place: tuple[str, str]) -> Cause | None:
    """How ``data``, a recipe as written on a base that held components at ``place`` (``("model", "heads")``), left
    none of them: a null for them all or an empty mapping (``model.heads: null``, ``{}``), or else the last null
    dropping one its base held (``model.heads.NAME: null``; ``dropped`` holds the keys of each key merging ``data``
    onto its base removed); ``None`` where it did neither."""
    section, kind = place
    node = data.get(section)
    if isinstance(node, dict) and kind in node and node[kind] in (None, {}):
        return "", f"{section}.{kind}", dropping(kind, [], node[kind])
    names = [keys[-1] for keys in dropped if keys[:-1] == place]
    return ("", f"{section}.{kind}.{names[-1]}", dropping(kind, names[-1:], None)) if names else None


def dropping(kind: str, names: list[str], value: Any) -> str:
    """How a ``value`` written at ``model.KIND`` (``names`` empty) or at ``model.KIND.NAME`` left the model without
    components of ``kind`` (``heads``), as an error says it."""
    if names:
        return f"dropping {kind[:-1]} {names[0]!r}"
    return f"null, dropping every {kind[:-1]}," if value is None else "an empty mapping"


def base_of(data: dict[str, Any], source: str, folder: Path) -> Base | None:
    """The recipe ``data``'s ``base:`` names, read now; ``None`` where it names none.

    The base is a path relative to ``folder`` (the recipe file's; the working directory for a mapping), or a shipped
    recipe's name (``base_file``); it may not have a ``base:`` of its own (refused, saying to write it out with
    ``faim recipe show`` given its path as read from the working directory, quoted as the shell reads it). ``source``
    names ``data`` in errors (its file, or ``"<dict>"``).
    """
    base_path = base_file(data, source, folder)
    if base_path is None:
        return None
    base_name = data["base"]
    if not isinstance(base_name, str):
        raise RecipeError(source, "base", f"expected one recipe's name or path, got {base_name!r}")
    if is_file(base_path, source):
        raise RecipeError(source, "base", f"{base_name} is this recipe itself; base it on another recipe")
    try:
        base = read_yaml(base_path)
    except RecipeError as error:  # named as in_base names the base of an error in what it writes
        raise RecipeError(f"{base_path} (the base of {source})", error.path, error.problem) from error.__cause__
    if isinstance(base.get("base"), str) and is_file(base_path.parent / base["base"], source):
        raise RecipeError(
            source,
            "base",
            f"{base_name} has this recipe as its base: ({base['base']}), so each is based on the other; give one of"
            " them no base:, or base both on a recipe without a base:",
        )
    if "base" in base:
        raise RecipeError(
            source,
            "base",
            f"{base_name} has a base: of its own ({base['base']}), and a recipe has at most one level of base:;"
            f" write {base_name} out resolved (faim recipe show {shell_path(base_path)} > FILE) and edit that,"
            " or base on a recipe without a base:",
        )
    return Base(base_path, base)


def is_file(path: Path, source: str) -> bool:
    """Whether ``path`` is the recipe file ``source`` names (``False`` for a mapping's, ``"<dict>"``)."""
    return path.is_file() and Path(source).is_file() and path.samefile(source)


def base_file(data: dict[str, Any], source: str, folder: Path) -> Path | None:
    """The file of the recipe ``data``'s ``base:`` (``base_of``); ``None`` where it names none."""
    base_name = data.get("base")
    if base_name is None:
        return None
    if not isinstance(base_name, str):
        raise RecipeError(source, "base", f"expected one recipe's name or path, got {base_name!r}")
    if not base_name.strip():  # read as the recipe's own folder otherwise, refused as a folder
        raise RecipeError(
            source,
            "base",
            "an empty value names no recipe; name one (a file, or a shipped recipe's name), or remove base:",
        )
    beside = (folder / base_name) if not Path(base_name).is_absolute() else Path(base_name)
    shipped = shipped_file(base_name)
    here = beside.is_file() or (beside.exists() and shipped is None)
    if not here and shipped is not None:  # a shipped name, not a file of that name in the working folder
        return shipped
    try:
        return locate(beside)  # a file beside, or a folder beside (refused)
    except RecipeError as error:
        looked = "" if here else f" (looked in {folder})"
        raise RecipeError(source, "base", f"{base_name}: {error.problem}{looked}") from None


def attributed(
    error: RecipeError, overrides: Sequence[str], written: Written | None, merged: dict[str, Any]
) -> RecipeError:
    """``error``, raised reading or using the recipe ``written`` (as written, with its base as read; ``None`` where no
    file or mapping is known) merged onto its base with ``overrides`` applied (``merged``), naming what set
    the YAML path ``error.path``: the last override that set it after the recipe's name (``FILE: --set KEY.PATH=VALUE:
    key.path: ...``; ``override_at``), saying how to write a key holding a dot where the override split one
    (``dotted_key_remedy``), or else the base's file where the base wrote it (``in_base``); else ``error`` itself."""
    text = override_at(error.path, list(overrides))
    if text is not None:
        problem = error.problem + dotted_key_remedy(error, text)
        return RecipeError(f"{error.source}: --set {text}", error.path, problem)
    return error if written is None else in_base(error, written, merged, overrides)


def in_base(error: RecipeError, written: Written, merged: dict[str, Any], overrides: Sequence[str] = ()) -> RecipeError:
    """``error``, raised reading or using the recipe ``written`` (``error.source`` names it) merged onto its base
    (``merged``, overrides applied), naming the base's file instead where the base, as read with the recipe, holds
    more of the YAML path ``error.path`` than the recipe does (``held``) and ``merged`` kept all of it, as where the
    base writes the key refused (``BASE (the base of FILE): model.heads.hate.dropuot: ...``); else ``error`` itself:
    where the recipe or an override changed a component's type, which drops what the base wrote of it, a key found
    missing is theirs to give. Where the recipe or one of ``overrides`` writes, and changes from the base's, a setting
    the key must agree with (``RecipeError.agrees``: ``train.monitor`` for the base's ``train.mode``, ``model.heads``
    for the tasks the base's data reads labels for), it names the recipe's own key, with the base's one (``FILE:
    train.monitor: with train.mode of its base BASE: ...``), after the override that set it where one made them
    disagree (``FILE: --set train.monitor=val/loss: train.monitor: with ...``; ``disagreeing_override``), else where
    the recipe's file writes it and with the base's setting there the recipe is not refused at ``error.path``
    (``refused_at``); else the base's error is its own (a task misspelt in its data, whatever head the recipe
    changed). It reads no file, so it names what set the key when the recipe was read."""
    base = written.base
    if base is None:
        return error
    in_base_file = held(base.data, error.path)
    if in_base_file <= held(written.data, error.path) or held(merged, error.path) < in_base_file:
        return error
    for path in error.agrees:
        if value_at(merged, path) == value_at(base.data, path):
            continue
        text = disagreeing_override(error, path, written, overrides)
        if text is not None or (
            writes(written.data, path) and not refused_at(as_base_writes(merged, base.data, path), error.path)
        ):
            source = error.source if text is None else f"{error.source}: --set {text}"
            return RecipeError(source, path, f"with {error.path} of its base {base.file}: {error.problem}")
    return RecipeError(f"{base.file} (the base of {error.source})", error.path, error.problem)


def disagreeing_override(error: RecipeError, path: str, written: Written, overrides: Sequence[str]) -> str | None:
    """The one of ``overrides`` setting the YAML ``path`` (``override_at``) that made the recipe ``written`` refused
    at ``error.path``: the last such that the recipe read without it and those after it setting ``path`` is read
    (``refusal``; one refused as it is resolved, left without heads, is not); ``None`` where there is none, the
    recipe's file or its base having made it so whatever the overrides (``--set model.heads.spam.hidden_dim=64`` on a
    child whose heads lost the task its base's data reads), or where without it the recipe is refused elsewhere first,
    which leaves undecided whether it made the disagreement (``--set model.heads.spam.labels=[ham, spam]`` giving the
    labels of a task the child's file adds, its heads having lost the task its base's data reads)."""
    kept = list(overrides)
    for index in reversed(range(len(kept))):
        text = kept[index]
        if override_at(path, [text]) is None:
            continue
        del kept[index]
        try:
            resolved = resolve(written, error.source, kept)
        except RecipeError:
            continue
        if refusal(resolved) is None:
            return text
    return None


def as_base_writes(recipe: dict[str, Any], base: dict[str, Any], path: str) -> dict[str, Any]:
    """``recipe`` with what ``base`` writes at the YAML ``path`` (``model.heads``) in the place of its own, or without
    the key where ``base`` writes none."""
    changed = copy.deepcopy(recipe)
    *outer, last = path_keys(path)
    node = changed
    for key in outer:
        node = node.setdefault(key, {})
    if writes(base, path):
        node[last] = copy.deepcopy(value_at(base, path))
    else:
        node.pop(last, None)
    return changed


def refused_at(recipe: dict[str, Any], path: str) -> bool:
    """Whether reading the recipe mapping ``recipe`` (as ``faim.recipe.Recipe.from_dict`` reads it) is refused at the
    YAML ``path``."""
    return refusal(recipe) == path


def refusal(recipe: dict[str, Any]) -> str | None:
    """The YAML path at which reading the recipe mapping ``recipe`` (as ``faim.recipe.Recipe.from_dict`` reads it) is
    refused first; ``None`` where it is read."""
    try:
        validate(taking_defaults(python_values(recipe)))
    except RecipeError as error:
        return error.path
    return None


def writes(recipe: dict[str, Any], path: str) -> bool:
    """Whether ``recipe`` holds every key of the YAML ``path`` (``train.monitor``)."""
    return held(recipe, path) == len(path_keys(path))


def value_at(recipe: dict[str, Any], path: str) -> Any:
    """What ``recipe`` holds at the YAML ``path``; ``None`` where it holds not all of it."""
    node = recipe
    for key in path_keys(path):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def path_keys(path: str) -> list[str]:
    """The keys of the YAML ``path`` (``model.encoders.text[1].dim``) from the top, each list index as its digits."""
    return re.findall(r"[^.\[\]]+", path)


def held(recipe: dict[str, Any], path: str) -> int:
    """How many keys of the YAML ``path`` (``model.encoders.text[1].dim``), from the top, ``recipe`` holds."""
    node, count = recipe, 0
    for key in path_keys(path):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            break
        count += 1
    return count


def labels_as_words(recipe: dict[str, Any]) -> dict[str, Any]:
    """``recipe`` with each head label written ``true`` or ``false`` (a YAML boolean) read as that word, as a label
    is one (a model saved before booleans were read so holds them in its ``recipe.yaml``; its ``faim.json`` gives
    its labels)."""
    heads = recipe.get("model", {}).get("heads") if isinstance(recipe.get("model"), dict) else None
    for head in heads.values() if isinstance(heads, dict) else ():
        if isinstance(head, dict) and isinstance(head.get("labels"), list):
            head["labels"] = [str(label).lower() if isinstance(label, bool) else label for label in head["labels"]]
    return recipe
