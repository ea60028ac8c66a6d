"""A map keyed by objects' identity whose entries go with their objects: what is kept beside
a frozen record (a graph's file-form fields) that its value cannot key. ``weakref``'s
WeakKeyDictionary keys by value: two equal graphs would share one entry, which goes when the
first of them does, leaving the other with nothing kept."""

from __future__ import annotations

import weakref
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class WeakIdentityMap(Generic[V]):
    """``key -> value`` by ``key``'s identity; an entry is dropped when its key is collected,
    so the map holds no more entries than there are live keys."""

    def __init__(self) -> None:
        self._items: dict[int, V] = {}

    def __contains__(self, key: Any) -> bool:
        return id(key) in self._items

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._items.get(id(key), default)

    def __getitem__(self, key: Any) -> V:
        return self._items[id(key)]

    def __setitem__(self, key: Any, value: V) -> None:
        k = id(key)
        if k not in self._items:
            weakref.finalize(key, self._items.pop, k, None).atexit = False
        self._items[k] = value
