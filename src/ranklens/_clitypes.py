"""Number types of the command-line options: ASCII digits only, finite numbers only.

Python's ``int("１０")`` is 10 and ``float("nan")`` a number: click's own ``int`` and ``float``
types take both. An option of ranklens takes what a measure name takes: ASCII digits (``10``,
``0.05``, ``1e-3``), and a finite number.
"""

from __future__ import annotations

import math
from typing import Any

import click

__all__ = ["integer", "number"]


def _ascii(kind: Any, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> None:
    if isinstance(value, str) and not value.isascii():
        kind.fail(f"{value!r} is not a number written in ASCII digits.", param, ctx)


def _finite(kind: Any, value: Any, number: float, param: click.Parameter | None, ctx: click.Context | None) -> float:
    if not math.isfinite(number):
        kind.fail(f"{value!r} is not a finite number.", param, ctx)
    return number


class _Int(click.types.IntParamType):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        _ascii(self, value, param, ctx)
        return super().convert(value, param, ctx)


class _IntRange(click.IntRange):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        _ascii(self, value, param, ctx)
        return super().convert(value, param, ctx)


class _Float(click.types.FloatParamType):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        _ascii(self, value, param, ctx)
        return _finite(self, value, super().convert(value, param, ctx), param, ctx)


class _FloatRange(click.FloatRange):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        _ascii(self, value, param, ctx)
        return _finite(self, value, super().convert(value, param, ctx), param, ctx)


def integer(min: int | None = None, max: int | None = None) -> Any:
    """An option type: an integer in ASCII digits, within ``[min, max]`` when given.

    >>> integer(min=1).convert("10", None, None)
    10
    """
    return _Int() if min is None and max is None else _IntRange(min, max)


def number(min: float | None = None, max: float | None = None) -> Any:
    """An option type: a finite number in ASCII digits, within ``[min, max]`` when given.

    >>> number(min=0).convert("1e-3", None, None)
    0.001
    """
    return _Float() if min is None and max is None else _FloatRange(min, max)
