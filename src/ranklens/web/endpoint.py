"""An endpoint of the dashboard's JSON API and its parameters: declared once, they drive the validation.

:class:`Param` parses one query parameter (a missing, repeated, malformed or out-of-range value raises
:class:`BadParameter` naming it); :class:`Endpoint` is a GET endpoint with its parameters and the call that
answers it from the store. The parameters several pages share are here (``MEASURE``, ``START``...); each page's
endpoints are in :mod:`ranklens.web.routes`, all of them in :data:`ranklens.web.api.ENDPOINTS`.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._output.render import plain
from ..errors import InvalidParameterError

__all__ = ["BASELINE", "BY", "CONFIDENCE", "END", "MEASURE", "RESAMPLES", "SEED", "SERIES", "SLICE_PARAMS", "START",
           "WINDOW", "WINDOWS", "BadParameter", "Endpoint", "Param", "label_of", "table_rows"]

WINDOWS = ("hour", "day", "week")


# -- parameters ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One query parameter: its name, type, default and description (also its OpenAPI entry)."""

    name: str
    kind: str = "string"  # string, integer, number, date, enum, measure, list
    default: Any = None
    description: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    required: bool = False
    aliases: tuple[str, ...] = ()  # old spellings still accepted (the one vocabulary, docs/glossary.md)

    def parse(self, raw: list[str]) -> Any:
        if not raw:
            if self.required:
                raise BadParameter(self.name, "is required")
            return self.default
        if self.kind != "list" and len(raw) > 1:
            raise BadParameter(self.name, "is given more than once")
        if self.kind == "list":
            items = [x for r in raw for x in r.split(",") if x]
            if any(len(x) > 200 for x in items) or len(items) > 50:
                raise BadParameter(self.name, "has too many or too long values")
            return items or self.default
        v = raw[0]
        if len(v) > 200:
            raise BadParameter(self.name, "is longer than 200 characters")
        if self.kind == "integer":
            if not re.fullmatch(r"[+-]?\d{1,9}", v.strip()):
                raise BadParameter(self.name, f"must be an integer; got {v!r}")
            n = int(v)
            if (self.minimum is not None and n < self.minimum) or (self.maximum is not None and n > self.maximum):
                raise BadParameter(self.name, f"must be in [{self.minimum:g}, {self.maximum:g}]; got {n}")
            return n
        if self.kind == "number":
            try:
                x = float(v)
            except ValueError:
                raise BadParameter(self.name, f"must be a number; got {v!r}") from None
            if not math.isfinite(x) or (self.minimum is not None and x <= self.minimum) or (
                    self.maximum is not None and x >= self.maximum):
                raise BadParameter(self.name, f"must be a number in ({self.minimum:g}, {self.maximum:g}); got {v!r}")
            return x
        if self.kind == "enum":
            if v not in self.choices:
                raise BadParameter(self.name, f"must be one of {', '.join(self.choices)}; got {v!r}")
            return v
        if self.kind == "date":
            return _iso(self.name, v)
        if self.kind == "measure":
            from ..monitor.propensity import parse_store_measure as parse_measure  # ips_ forms too
            from ..monitor.storage.params import MAX_CUTOFF

            try:
                parsed = parse_measure(v)
            except (InvalidParameterError, ValueError):
                parsed = []
            if len(parsed) != 1:
                raise BadParameter(self.name, f"is not one measure: {v!r} (e.g. ndcg@10, map@10, mrr@10)")
            if parsed[0].k is not None and parsed[0].k > MAX_CUTOFF:
                raise BadParameter(self.name, f"asks a cutoff of {parsed[0].k}: at most {MAX_CUTOFF} ({v!r})")
            return parsed[0].key
        return v


class BadParameter(Exception):
    """A request parameter that is missing, repeated, malformed or unknown; ``name`` is the parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"`{name}` {message}")
        self.name = name


def _iso(name: str, v: str) -> str:
    """An ISO-8601 date or date-time, returned in a canonical form (UTC when no zone is given)."""
    s = v.strip()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}:?\d{2})?", s):
        raise BadParameter(name, f"must be an ISO-8601 date or date-time (2024-03-01 or 2024-03-01T12:00); got {v!r}")
    try:
        t = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise BadParameter(name, f"is not a valid date: {v!r}") from None
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return t.isoformat()



MEASURE = Param("measure", "measure", "ndcg@10",
               "Measure: ndcg@10, ndcg@5, map, mrr@10 ... (see Store.info()['tracked']); `metric` is its old name, "
               "still accepted.", aliases=("metric",))
START = Param("start", "date", None, "Start of the time range (inclusive), ISO-8601; UTC when no zone is given.")
END = Param("end", "date", None, "End of the time range (exclusive), ISO-8601.")
WINDOW = Param("window", "enum", "day", "Width of a time window.", choices=WINDOWS)
CONFIDENCE = Param("confidence", "number", 0.95, "Level of the intervals.", minimum=0.5, maximum=1.0)
RESAMPLES = Param("n_resamples", "integer", 1000, "Bootstrap resamples.", minimum=1, maximum=10000)
SEED = Param("seed", "integer", 0, "Seed of the resampling.", minimum=0, maximum=2**31 - 1)
BASELINE = Param("baseline", "string", None, "Baseline name from the store's configuration (default: its default).")
BY = Param("by", "list", None, "Series columns, comma-separated (default model,model_version,environment).")
SLICE_PARAMS = (
    MEASURE, START, END, BASELINE, Param("columns", "list", None, "Slice columns (default: all)."), BY,
    Param("depth", "integer", 2, "1: one column at a time; 2: also pairs of columns.", minimum=1, maximum=2),
    Param("min_support", "integer", 30, "Counted groups a slice needs in the window and in the baseline to be "
                                        "listed alone.", minimum=1, maximum=10**9),
    Param("correction", "enum", "holm", "Correction of the p-values for the number of slices listed.",
          choices=("holm", "bh", "none")),
)


@dataclass(frozen=True)
class Endpoint:
    """A GET endpoint of the JSON API."""

    path: str
    summary: str
    params: tuple[Param, ...]
    filters: bool
    call: Callable[[Any, dict[str, Any], dict[str, Any]], Any]
    description: str = ""
    prefixed_filters: tuple[str, ...] = field(default=())  # compare: a_<column>, b_<column>



def label_of(st: Any, measure: str) -> dict[str, Any]:
    """Whether ``measure`` is naive or debiased, and for a debiased one where its propensities come from: the
    ``label`` of every answer about a measure the user chose (:func:`ranklens.monitor.propensity.measure_label`)."""
    from ..monitor.propensity import measure_label, split_ips

    return measure_label(measure, st.info().get("propensity") if split_ips(measure)[0] else None)


def table_rows(table: Any) -> list[dict[str, Any]]:
    return [{k: plain(v) for k, v in row.items()} for row in table.to_pylist()]


SERIES = ("model", "model_version", "environment")

