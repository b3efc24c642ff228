"""Old spellings of renamed keywords, attributes and keys, kept for one release (the one vocabulary, docs/glossary.md).

An old spelling still works and warns with a :class:`DeprecationWarning` naming the new one; giving both the old
and the new spelling of one keyword is refused. Standard library only.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import InvalidParameterError

__all__ = ["RenamedKeys", "deprecated_alias", "module_aliases", "renamed_keywords", "warn_renamed"]

F = TypeVar("F", bound=Callable[..., Any])


def warn_renamed(old: str, new: str, where: str, stacklevel: int = 3) -> None:
    """The one warning of an old spelling: ``{where}: `old` is deprecated, use `new` (...)``."""
    warnings.warn(f"{where}: `{old}` is deprecated, use `{new}` (the old name goes in the next release; "
                  "docs/glossary.md).", DeprecationWarning, stacklevel=stacklevel)


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """A decorator: each ``old=new`` keyword given under its old name is passed under the new one, with a warning.

    >>> import warnings
    >>> @renamed_keywords(metrics="measures")
    ... def f(measures=("ndcg",)):
    ...     return measures
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f(metrics=["mrr"]), str(w[0].message)[:38]
    (['mrr'], 'f: `metrics=` is deprecated, use `meas')
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise InvalidParameterError(f"`{new}` given twice: as `{new}=` and as its old name "
                                                    f"`{old}=` (deprecated); keep `{new}=`.")
                    warn_renamed(f"{old}=", f"{new}=", fn.__qualname__)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def module_aliases(module: str, **old: tuple[str, Any]) -> Callable[[str], Any]:
    """A module's ``__getattr__`` that gives each old name (``old=("NewName", obj)``) its new object, warning.

    >>> import warnings
    >>> get = module_aliases("pkg.mod", Judgement=("Verdict", int))
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     get("Judgement"), str(w[0].message)
    (<class 'int'>, 'pkg.mod.Judgement is deprecated: use Verdict.')
    """

    def __getattr__(name: str) -> Any:
        if name in old:
            new, obj = old[name]
            warnings.warn(f"{module}.{name} is deprecated: use {new}.", DeprecationWarning, stacklevel=2)
            return obj
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def deprecated_alias(new: str, old: str) -> property:
    """A read-only attribute ``old`` that returns ``new`` and warns (put it in the class body as ``old = ...``)."""

    def get(self: Any) -> Any:
        warn_renamed(old, new, type(self).__name__)
        return getattr(self, new)

    return property(get, doc=f"Deprecated: use ``{new}``.")


class RenamedKeys(dict):  # type: ignore[type-arg]
    """A dict whose renamed keys can still be read under their old name (with a warning), never written there.

    >>> import warnings
    >>> row = RenamedKeys({"measure": "ndcg@10"}, renamed={"metric": "measure"})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     row["metric"], "metric" in row, list(row)
    ('ndcg@10', False, ['measure'])
    """

    def __init__(self, data: Any = (), *, renamed: dict[str, str]) -> None:
        super().__init__(data)
        self._renamed = renamed

    def __missing__(self, key: Any) -> Any:
        if key in self._renamed:
            warn_renamed(f"[{key!r}]", f"[{self._renamed[key]!r}]", "a row")
            return self[self._renamed[key]]
        raise KeyError(key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self or key in self._renamed else default

    def __reduce__(self) -> Any:
        return (_renamed_keys, (dict(self), self._renamed))


def _renamed_keys(data: dict[str, Any], renamed: dict[str, str]) -> RenamedKeys:
    return RenamedKeys(data, renamed=renamed)
