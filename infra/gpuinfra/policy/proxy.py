"""`pulumi_policy.proxy.unknown_checking_proxy`, wrapping on access instead of up front.

The library's proxy copies a resource's whole property tree into wrappers before a policy reads
anything; over 10,000 resources that copy is most of a run, and most policies read two or three keys.
These subclasses of the library's own `_DictProxy` and `_ListProxy` wrap a nested value only when it
is read, and raise the same `UnknownValueError`, with the same property path, on the same reads (a
test walks every path of the example graphs through both). `serialize_properties` unwraps them as it
unwraps the originals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy.proxy import _append_prop, _DictProxy, _ListProxy, _raise_if_unknown


def lazy_unknown_checking_proxy(props: Mapping[str, Any]) -> Mapping[str, Any]:
    return LazyDictProxy(dict(props) if not isinstance(props, dict) else props, [])


def _wrap(value: Any, path: list[str]) -> Any:
    if isinstance(value, list):
        return LazyListProxy(value, path)
    if isinstance(value, dict):
        return LazyDictProxy(value, path)
    return value


class _Lazy:
    """What both lazy proxies share: the raw target, the path to it, and reading one child."""

    _target: Any
    _path: list[str]

    def _keep(self, target: Any, path: list[str]) -> None:
        self._target = target
        self._path = path

    def _read(self, key: Any, index: Any) -> Any:
        return _raise_if_unknown(key, _wrap(self._target[key], _append_prop(self._path, index)), self._path)


class LazyDictProxy(_Lazy, _DictProxy):
    def __init__(self, target: dict[str, Any], props_acc: list[str]) -> None:
        _DictProxy.__init__(self, target, props_acc)
        self._keep(target, props_acc)

    def __getitem__(self, key: Any) -> Any:
        return self._target if key == "__target" else self._read(key, key)


class LazyListProxy(_Lazy, _ListProxy):
    def __init__(self, target: list[Any], props_acc: list[str]) -> None:
        _ListProxy.__init__(self, target, props_acc)
        self._keep(target, props_acc)

    def __getitem__(self, key: Any) -> Any:
        if key == "__target":
            return self._target
        if isinstance(key, slice):  # like the original: the wrapped elements, unknown or not
            return [_wrap(self._target[i], _append_prop(self._path, i)) for i in range(*key.indices(len(self._target)))]
        return self._read(key, key + len(self._target) if isinstance(key, int) and key < 0 else key)


__all__ = ["LazyDictProxy", "LazyListProxy", "lazy_unknown_checking_proxy"]
