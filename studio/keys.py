"""The keys a settings model takes, for the words of a mistake in a file an operator wrote.

One place for every model (the configuration's sections, a device's options, a rule set):
which model holds the keys at a place of a document (:func:`model_at`), and the closest
known key to a misspelt one (:func:`unknown_key_hint`). Until 2026-12-07 only a device's
options named the key meant (``keepalve`` said "check the spelling", ``blackjack_pay``
pydantic's "Extra inputs are not permitted"; an operator's review).
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel


def closest_key(key: str, known: Sequence[str]) -> str | None:
    """The key of ``known`` the misspelt ``key`` most likely meant, if one is close."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_key_hint(key: str, known: Sequence[str]) -> str:
    """The closest of ``known`` to the misspelt ``key``, and every key ``known``."""
    close = closest_key(key, known)
    mean = f"did you mean {close!r}? " if close else ""
    return f"{mean}the keys are {', '.join(known)}"


def _kinds(annotation: Any) -> list[Any]:
    """The types an annotation allows: unions and ``Annotated`` unwrapped, ``None`` left out."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _kinds(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [kind for arg in typing.get_args(annotation) for kind in _kinds(arg)]
    if annotation is type(None):
        return []
    return [annotation]


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _free(kinds: list[Any]) -> bool:
    """Whether a place of these types takes any keys (a ``dict[str, Any]``, ``Any``)."""
    for kind in kinds:
        if kind is Any or kind is dict:
            return True
        if typing.get_origin(kind) is dict and not any(
            _is_model(value) for value in _kinds(typing.get_args(kind)[-1])
        ):
            return True
    return False


def _child(kinds: list[Any], key: str | int) -> list[Any] | None:
    """The types at ``key`` below a place of these types; None: no such place."""
    for kind in kinds:
        origin = typing.get_origin(kind)
        if origin in (list, tuple, set, frozenset):
            items = _kinds(typing.get_args(kind)[0])
            if isinstance(key, int):
                return items
            # A TOML header names a list's items without an index ([[tables.devices]]).
            below = _child(items, key)
            if below is not None:
                return below
        elif origin is dict and isinstance(key, str):
            return _kinds(typing.get_args(kind)[-1])
        elif _is_model(kind) and isinstance(key, str) and key in kind.model_fields:
            return _kinds(kind.model_fields[key].annotation)
    return None


def model_at(root: type[BaseModel], path: Sequence[str | int]) -> type[BaseModel] | None:
    """The model whose keys the place ``path`` of a ``root`` document holds (list indexes
    and a dict's keys walked through); None where it takes any keys or is no model's."""
    kinds: list[Any] = [root]
    for key in path:
        below = _child(kinds, key)
        if below is None:
            return None
        kinds = below
    # A list's items (a TOML header names them without an index: [[tables.devices]]).
    kinds = [
        item
        for kind in kinds
        for item in (
            _kinds(typing.get_args(kind)[0]) if typing.get_origin(kind) is list else [kind]
        )
    ]
    if _free(kinds):
        return None
    return next((kind for kind in kinds if _is_model(kind)), None)


def unknown_key_words(root: type[BaseModel], location: Sequence[str | int]) -> str | None:
    """``did you mean 'keepalive'? the keys are ...`` for the unknown key at ``location``
    of a ``root`` document (pydantic's ``extra_forbidden``); None if no model is found."""
    model = model_at(root, location[:-1])
    if model is None or not location:
        return None
    return unknown_key_hint(str(location[-1]), list(model.model_fields))


def holds_list(root: type[BaseModel], path: Sequence[str]) -> bool:
    """Whether the key at ``path`` holds a list (a TOML ``[[header]]``)."""
    kinds: list[Any] | None = [root]
    for key in path:
        kinds = _child(kinds, key) if kinds is not None else None
    return any(typing.get_origin(kind) is list for kind in kinds or [])


def sections(model: type[BaseModel]) -> list[str]:
    """The keys of ``model`` that hold a section (a model, a list of them, a mapping)."""
    names = []
    for name, field in model.model_fields.items():
        kinds = _kinds(field.annotation)
        if any(_is_model(kind) or typing.get_origin(kind) in (list, dict) for kind in kinds):
            names.append(name)
    return names
