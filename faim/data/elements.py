"""The elements of a post, by kind: where each kind is read from, pictures decoded, and the error naming a post
that cannot be read. Needs neither torch nor the encoders, so the collator and ``faim.runtime`` read posts alike."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from faim.data.images import ImageError, check_picture, load_image
from faim.data.post import (
    Post,
    as_post,
    as_posts,
    field_names,
    own_meta,
    post_id,
    post_name,
    posts_given,
    warn_places_taken,
)
from faim.notices import warn
from faim.registry import ELEMENT_MODALITIES
from faim.wording import plural

T = TypeVar("T")
P = TypeVar("P")


class PostError(ValueError):
    """A post that cannot be used, with where it came from and which field is wrong.

    Args:
        post: The post.
        field: The field that is wrong, or the fields of a post wrong for holding none of them (given with ``kind``);
            none (``()``, given with ``kind``) for a problem of no one field, as scores that are not finite.
        problem: What is wrong, and what to do.
        kind: What kind of problem, as ``faim score`` records it (``error_kind``); by default the one ``field``.

    Attributes:
        field: The field that is wrong, a ``str``, also where it was given as a sequence of one; the fields, a
            ``tuple`` of ``str``, where several or none were given.
    """

    def __init__(self, post: Post, field: str | Sequence[str], problem: str, kind: str | None = None) -> None:
        fields = (field,) if isinstance(field, str) else tuple(field)
        named = f" {field_names(fields)}" if fields else ""
        super().__init__(f"{post_name(post.origin, post.id)}{named}: {problem}")
        self.post_id = post.id
        self.origin = post.origin
        self.field: str | tuple[str, ...] = fields[0] if len(fields) == 1 else fields
        self.problem = problem
        self.kind = kind or self.field

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the post's name, the field, the problem and the kind, so that a process that read the post can
        give its error to another (a DataLoader worker to the process reading the loader)."""
        return refused_post, (self.post_id, self.origin, self.field, self.problem, self.kind)


def refused_post(post_id: str, origin: str, field: str | tuple[str, ...], problem: str, kind: str) -> PostError:
    """The ``PostError`` a pickled one is read back as (``PostError.__reduce__``)."""
    return PostError(Post(id=post_id, origin=origin), field, problem, kind)


def read_each(posts: Iterable[P], read: Callable[[P], T]) -> tuple[list[tuple[P, T]], list[PostError]]:
    """Each post ``read`` reads (a ``Post``, or a post with what else ``read`` takes), with what it gave, and the error
    of each post it refuses (a ``PostError``; any other error is raised); every post is read once, in order."""
    kept, errors = [], []
    for post in posts:
        try:
            kept.append((post, read(post)))
        except PostError as error:
            errors.append(error)
    return kept, errors


def named(post: Post, index: int) -> Post:
    """``post``, or, where it has no origin, a copy of it named by its ``index`` among the posts given (``post 3``),
    as an error about it names it; its id is its own. The copy is not checked again (``Post.named``): ``post`` comes
    checked (``as_posts``)."""
    return post if post.origin else post.named(f"post {index}")


def element_refs(post: Post, kind: str, limit: int) -> list[Any]:
    """What the elements of one kind in a post are read from: its text, comment strings, image references,
    or its ``meta`` mapping (one element, for encoders of numeric metadata)."""
    if kind == "text":
        return [post.text] if post.has_text else []
    if kind == "meta":
        return [post.meta]
    if kind == "comments":
        return post.comments[:limit]
    return post.images[:limit]


LISTED_KINDS = {"image": "pictures", "comments": "comments"}
"""The element kinds a post holds a list of, of which a model reads the first ``max_elements``, as a warning names
them."""


GIVEN_POSTS = "the posts given"
"""How a warning names the posts given to a model's ``score``, ``embed`` or ``predict`` through the Python API."""


def most_elements(post: Post, kinds: Collection[str]) -> int:
    """How many pictures or comments ``post`` holds of the kinds of ``kinds`` it holds most of (0 of none): the kinds
    of ``LISTED_KINDS``, each read by its field, as a mapping built for every post would cost three times as long."""
    return max(len(post.images) if "image" in kinds else 0, len(post.comments) if "comments" in kinds else 0)


def overfull(posts: Iterable[Post], kinds: Collection[str], limit: int) -> tuple[int, int]:
    """How many of ``posts`` hold more pictures or comments of ``kinds`` (the kinds a model reads) than ``limit`` (the
    model's ``max_elements``, of which it reads the first), and the most any of them holds (0 where none does)."""
    over = [count for post in posts if (count := most_elements(post, kinds)) > limit]
    return len(over), max(over, default=0)


def warn_overfull(count: int, most: int, limit: int, kinds: Collection[str], name: str) -> None:
    """Warn (``FaimWarning``) where ``count`` posts of ``name`` hold more pictures or comments of ``kinds`` than the
    model reads of a post (``limit``, the recipe's ``train.max_elements``; as ``overfull`` counts them, up to ``most``):
    each is read from its first ones alone, scored and trained on as a post holding no more. Nothing is said of none."""
    if not count:
        return
    held = " or ".join(noun for kind, noun in LISTED_KINDS.items() if kind in kinds)
    warn(
        f"{name}: {plural(count, 'post')} {'holds' if count == 1 else 'hold'} more {held} than the model reads of a "
        f"post (up to {most}): it reads the first {limit} of each alone (the recipe's train.max_elements: {limit}), "
        "the rest unread; a model trained with a larger train.max_elements reads more"
    )


def warn_overfull_splits(splits: Mapping[str, Sequence[Post]], kinds: Collection[str], limit: int) -> None:
    """Warn once (``warn_overfull``) of the posts of every split of ``splits`` (each split's name, as its source
    describes it, to its posts) holding more pictures or comments of ``kinds`` than ``limit``, as training warns of
    its training, validation and ``eval.split`` posts: named by the splits holding any, each with its count where
    more than one does, as ``faim eval`` and ``faim score`` name the one split they read."""
    held = {name: counted for name, posts in splits.items() if (counted := overfull(posts, kinds, limit))[0]}
    total, most = sum(count for count, _ in held.values()), max((most for _, most in held.values()), default=0)
    named = ", ".join(f"{name} ({plural(count, 'post')})" for name, (count, _) in held.items())
    warn_overfull(total, most, limit, kinds, next(iter(held)) if len(held) == 1 else named)


def reads_nothing(post: Post, kinds: Iterable[str]) -> bool:
    """Whether ``post`` holds no element of ``kinds`` (the kinds a model reads), metadata whose every field is missing
    or that holds only the fields faim gives posts itself (``Post.has_meta``) none: a model would give it the scores
    it gives a post of nothing."""
    return not any(post.has_meta if kind == "meta" else element_refs(post, kind, 1) for kind in kinds)


KIND_NAMES = {"text": "text", "comments": "comments", "image": "image", "meta": "metadata"}
"""Each element kind as an error names what a post holds of it."""

POST_FIELDS = {"text": "text", "comments": "comments", "image": "images", "meta": "meta"}
"""Each element kind's field in a post (``Post``'s, a dict's key), as an error names it."""


def nothing_read(kinds: Iterable[str], blank: Collection[str] = ()) -> str:
    """The problem of a post that ``reads_nothing`` of ``kinds``, saying of each kind that the post's field is empty
    where it has the field (``blank``: those kinds, such as a text column holding spaces) and that it has none
    otherwise."""
    kinds = list(kinds)
    said = [
        f"the {KIND_NAMES[kind]} {'are' if kind == 'comments' else 'is'} empty"
        if kind in blank
        else f"no {KIND_NAMES[kind]}"
        for kind in kinds
    ]
    return f"nothing the model reads ({', '.join(kinds)}): {', '.join(said)}"


def readable_posts(
    posts: Iterable[Post | Mapping[str, Any]], kinds: Sequence[str], read: Callable[[Post], Any]
) -> tuple[list[Post], list[PostError]]:
    """The posts given (``given_posts``) that ``read`` reads (``read_each``), as given, and the errors of the others, in
    the order given: a dict that is no post (one ``Post.from_dict`` refuses) refused with its ``PostError`` of kind
    ``row`` (``given_posts``), and a post that ``reads_nothing`` of ``kinds`` refused before it is read with one of
    kind ``empty``, as ``faim score`` names such rows; each post is read as given, and the error of one set aside
    names it as ``posts_to_read`` names it (``named``: a post without an origin by its index among ``posts``), so that
    only a post set aside is copied to be named.

    Raises:
        TypeError, ValueError: Where ``given_posts`` refuses the posts (one post given where a list is expected, a
            ``Post`` whose id was taken away after it was built).
    """
    given = given_posts(posts)

    def read_something(index: int) -> Any:
        post = given[index]
        if isinstance(post, PostError):
            raise post
        try:
            if reads_nothing(post, kinds):
                raise empty_post(post, kinds)
            return read(post)
        except PostError as error:
            raise PostError(named(post, index), error.field, error.problem, error.kind) from error.__cause__

    kept, errors = read_each(range(len(given)), read_something)
    return [given[index] for index, _ in kept], errors


def given_posts(posts: Iterable[Post | Mapping[str, Any]]) -> list[Post | PostError]:
    """Each of the posts given (``posts_given``) as a post (``as_post``), or, where it is given as a dict (or what is no
    ``Post``) that is none, its error (``refused_item``: data, as a file's row that is no post); warning of dicts
    without an id that take another post's id as theirs (``warn_places_taken``).

    Raises:
        TypeError: Where ``posts_given`` refuses the posts.
        ValueError: On a ``Post`` whose id was taken away or a field set to a value of the wrong type after it was
            built (``as_post``): the code that changed it is at fault, not its data.
    """
    items = posts_given(posts)
    given: list[Post | PostError] = []
    for index, item in enumerate(items):
        try:
            given.append(as_post(item, index))
        except ValueError as error:
            if isinstance(item, Post):
                raise
            given.append(refused_item(item, index, error))
    warn_places_taken({index: post for index, post in enumerate(given) if isinstance(post, Post)}, items)
    return given


def refused_item(item: Any, index: int, error: ValueError) -> PostError:
    """The ``PostError`` (of kind ``row``, as ``faim score`` records a row that is no post) of ``item``, the
    ``index``-th of the posts given, a dict (or what is no mapping) that ``Post.from_dict`` refused with ``error``:
    named as ``posts_to_read`` names a post, by its index and its id, or its index where it gives none that is an id
    (``post_id``); its problem is the message of ``error``, which names the post so too, less that name."""
    origin = f"post {index}"
    try:
        ident = post_id(item.get("id") if isinstance(item, Mapping) else None, index)
    except ValueError:  # an id of a type no id is, which the problem names
        ident = str(index)
    problem = str(error).removeprefix(post_name(origin, ident)).removeprefix(origin).lstrip(": ")
    return PostError(Post(id=ident, origin=origin), (), problem, "row")


def empty_post(post: Post, kinds: Sequence[str], remedy: str = "") -> PostError:
    """The ``PostError`` (of kind ``empty``, naming the post's fields of ``kinds``: ``POST_FIELDS``) of a post that
    ``reads_nothing`` of ``kinds``, ``remedy`` (what to do) after the problem, which says its text or metadata is empty
    where it has the field (a blank text, metadata whose every field is missing or whose only fields are those faim
    gives posts itself, ``own_meta``)."""
    blank = [kind for kind, field in (("text", post.text is not None), ("meta", own_meta(post.meta))) if field]
    problem = nothing_read(kinds, blank)
    return PostError(post, [POST_FIELDS[kind] for kind in kinds], f"{problem}{remedy}", "empty")


def posts_to_read(posts: Iterable[Post | Mapping[str, Any]], kinds: Sequence[str]) -> list[Post]:
    """The posts given through the Python API (``as_posts``) as a model reads them: each without an origin named by
    its index among them (``named``: ``post 3``), so that every error about it, a picture that cannot be read as a
    post holding nothing, names it so (a post read from a file is named by its origin, its file and row); their ids
    are their own.

    Raises:
        TypeError, ValueError: Where ``as_posts`` refuses the posts.
        PostError: Of kind ``empty``, on the first post that ``reads_nothing`` of ``kinds`` (a model would score it as
            a post of nothing), naming, where there are several, how many and the first ``SHOWN_EMPTY`` of them, and
            saying to leave them out (``readable`` sets such posts aside).
    """
    named_posts = [named(post, index) for index, post in enumerate(as_posts(posts))]
    empty = [post for post in named_posts if reads_nothing(post, kinds)]
    if empty:
        listed = ", ".join(post_name(post.origin, post.id) for post in empty[:SHOWN_EMPTY])
        more = f" and {len(empty) - SHOWN_EMPTY} more" if len(empty) > SHOWN_EMPTY else ""
        counted, them = (f" ({len(empty)} posts in all: {listed}{more})", "them") if len(empty) > 1 else ("", "it")
        raise empty_post(
            empty[0], kinds, f"{counted}; leave {them} out (the model's readable(posts) sets such posts aside)"
        )
    return named_posts


SHOWN_EMPTY = 5
"""How many of the posts holding nothing a model reads ``posts_to_read`` names."""


MAP_ELEMENTS = "map the columns that hold them (--map text=COLUMN, or data.columns in a recipe)"
"""What a user whose data holds nothing the model reads may do, as ``refuse_nothing_read`` says by default."""


def refuse_nothing_read(posts: list[Post], kinds: Sequence[str], name: str, remedy: str = MAP_ELEMENTS) -> None:
    """Refuse ``posts`` (of ``name``) none of which holds an element of ``kinds`` (the kinds a model reads), as where
    the data's columns are not mapped to the post's fields; ``remedy`` ends the error.

    Raises:
        ValueError: Naming ``name``, the kinds and ``remedy``.
    """
    if posts and all(reads_nothing(post, kinds) for post in posts):
        raise ValueError(f"{name}: no post holds anything the model reads ({', '.join(kinds)}); {remedy}")


def leave_out_empty(posts: list[Post], kinds: Sequence[str], name: str, remedy: str = MAP_ELEMENTS) -> list[Post]:
    """``posts`` without those holding nothing of ``kinds`` (``reads_nothing``: the model would score them as posts of
    nothing, as ``faim score`` records them ``empty``), a warning (``FaimWarning``) giving how many of ``name``'s
    posts were left out and the first.

    Raises:
        ValueError: Where every post holds nothing the model reads (``refuse_nothing_read``, ending in ``remedy``).
    """
    kept = [post for post in posts if not reads_nothing(post, kinds)]
    if len(kept) == len(posts):
        return posts
    if not kept:
        refuse_nothing_read(posts, kinds, name, remedy)
    first = next(post for post in posts if reads_nothing(post, kinds))
    warn(
        f"{name}: {len(posts) - len(kept)} of {len(posts)} posts hold nothing the model reads ({', '.join(kinds)}) and "
        f"are left out; the first: {post_name(first.origin, first.id)}"
    )
    return kept


def raw_elements(post: Post, kind: str, limit: int, draft_size: tuple[int, int] | None = None) -> list[Any]:
    """The raw elements of one kind in a post (strings, or decoded PIL images), at most ``limit``.

    ``draft_size`` lets JPEGs decode at a reduced scale no smaller than it (see ``load_image``).

    Raises:
        PostError: On a picture that cannot be read, or a string that is not text.
    """
    if ELEMENT_MODALITIES.get(kind) == "text":
        strings = element_refs(post, kind, limit)
        for string in strings:
            check_text(post, kind, string)
        return strings
    if kind != "image":
        return element_refs(post, kind, limit)
    images = []
    for ref in element_refs(post, kind, limit):
        try:
            images.append(load_image(ref, post.image_root, draft_size))
        except ImageError as error:
            raise PostError(post, "images", str(error), f"image_{error.kind}") from error
    return images


def check_text(post: Post, field: str, string: str) -> None:
    """Refuse a string holding half of a UTF-16 surrogate pair (JSON's ``"\\ud83d"``, an emoji cut in two), which no
    tokenizer reads and no UTF-8 file can hold.

    Raises:
        PostError: Of kind ``text_encoding``, naming the field and where the half pair is.
    """
    try:
        string.encode("utf-8")
    except UnicodeEncodeError as error:
        half = f"\\u{ord(string[error.start]):04x}"
        problem = f"holds half of a UTF-16 surrogate pair ({half} at character {error.start + 1})"
        raise PostError(post, field, problem, "text_encoding") from None


def missing_picture(post: Post, limit: int) -> PostError | None:
    """The error of the first of a post's first ``limit`` pictures that is not there (``check_picture``), if any."""
    for ref in element_refs(post, "image", limit):
        try:
            check_picture(ref, post.image_root)
        except ImageError as error:
            return PostError(post, "images", str(error), f"image_{error.kind}")
    return None


def check_pictures(posts: Iterable[Post], kinds: Collection[str], limit: int) -> None:
    """Refuse the first of ``posts`` one of whose first ``limit`` pictures is not there (``missing_picture``: missing,
    a folder or empty, found without reading it), where ``kinds`` (the element kinds a model reads) hold ``image``,
    before the model reads any: reading the posts would stop at it only once the model had read every post before it.
    A picture that is there but does not decode is found as it is read.

    Raises:
        PostError: Of kind ``image_missing``, ``image_empty`` or ``image_unreadable``, naming the post and the picture.
    """
    if "image" not in kinds:
        return
    for post in posts:
        if (error := missing_picture(post, limit)) is not None:
            raise error


def check_texts(posts: Iterable[Post], kinds: Collection[str], limit: int) -> None:
    """Refuse the first of ``posts`` whose text or one of its first ``limit`` comments (the elements a model reads,
    ``element_refs``) ``check_text`` refuses, where ``kinds`` (the element kinds a model reads) hold ``text`` or
    ``comments``, before the model reads any: evaluation and training read every post, so such a post would end the
    work part way, where ``faim score`` records it and scores the rest.

    Raises:
        PostError: Of kind ``text_encoding``, naming the post's origin (its file and row), its id and the field.
    """
    fields = [field for field in ("text", "comments") if field in kinds]
    for post in posts:
        for field in fields:
            for string in element_refs(post, field, limit):
                check_text(post, field, string)


def check_posts(
    posts: Iterable[Post],
    preprocessors: Mapping[str, Callable[[list[Any]], Any]],
    limit: int,
    also: Callable[[Post], Any] | None = None,
) -> None:
    """Refuse, before a model reads any of ``posts``, the first reading them would refuse but for a picture that does
    not decode: each post's elements but its pictures are read and checked as ``checked_elements`` reads them (a text
    that is not text, metadata that is not numbers), and ``also`` read of it where given, and its pictures looked for
    (``check_pictures``: not there, a folder or empty), where reading the posts would stop at it only once the model
    had read every post before it. The detector's collator (``faim.data.collate.PostCollator.check``) and the
    exported runtime both check posts so.

    Raises:
        PostError: Naming the post and the field.
    """
    unpictured = {kind: each for kind, each in preprocessors.items() if ELEMENT_MODALITIES[kind] != "image"}
    for post in posts:
        checked_elements(post, unpictured, limit, {})
        if also is not None:
            also(post)
    check_pictures(posts, preprocessors, limit)


def checked_elements(
    post: Post,
    preprocessors: Mapping[str, Callable[[list[Any]], Any]],
    limit: int,
    draft_sizes: Mapping[str, tuple[int, int] | None],
) -> dict[str, list[Any]]:
    """The raw elements of each kind ``preprocessors`` preprocess (see ``raw_elements``), at most ``limit`` each.

    A preprocessor with a ``check(element)`` method has each element checked here, so a bad one is reported with
    the post it came from.

    Raises:
        PostError: On an element that cannot be read or fails its check.
    """
    elements = {kind: raw_elements(post, kind, limit, draft_sizes.get(kind)) for kind in preprocessors}
    for kind, preprocess in preprocessors.items():
        check = getattr(preprocess, "check", None)
        for element in elements[kind] if check else ():
            try:
                check(element)
            except ValueError as error:
                raise PostError(post, kind, str(error)) from error
    return elements
