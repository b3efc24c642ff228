"""The monitoring configuration: attribution of event labels to gains, evaluation, baseline, monitors.

A small TOML file (``ranklens.toml`` by default) holds it; every key is optional::

    [attribution]
    rule = "weighted"                 # "binary" | "count" | "weighted"
    positive = ["click"]              # positive classes for "binary" and "count"
    weights = { click = 1, favorite = 2, buy = 3 }   # for "weighted"

    [evaluation]
    convention = "ranklens"           # any preset of ranklens.CONVENTIONS
    empty = "skip"                    # lists without any gain: "skip" (counted as excluded) or 0
    tracked = ["ndcg@1", "ndcg@5", "ndcg@10", "mrr@10", "map@10"]   # stored per group at ingest
    partial = "skip"                  # lists that lost rows to the quarantine: left out (counted), or "keep"

    [baseline]
    environment = "training"          # or: start = "2026-10-01", end = "2026-10-08"; or: previous = true

    [[monitors]]
    name = "ndcg@10 drop"
    metric = "ndcg@10"
    window = "day"
    relative_drop = 0.10              # or threshold = 0.7 (absolute)
    min_groups = 50
    significance = 0.05               # also require Welch's test p < 0.05
    where = { environment = "production" }

    [labels]
    maturity = "2d"                   # labels of a window are complete this long after it ends (default: learned)

    [alerts]
    webhook = "http://127.0.0.1:9000/hook"
    webhook_format = "json"           # or "slack" (an incoming webhook's {"text", "blocks"})
    retries = 3                       # tries per delivery, waiting backoff, 2 x backoff ... seconds between
    backoff = 1.0

    [[alerts.routes]]                 # more webhooks, each for some severities, models or monitors
    webhook = "https://pager.example/hook"
    severities = ["critical"]
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._defs.presets import CONVENTIONS, get_convention
from ..errors import InvalidParameterError
from . import kinds
from .config_checks import check_monitor_types, check_monitor_values, key_names, shown
from .propensity import parse_store_measure
from .propensity_config import parse_propensity
from .routing import Route, parse_routes
from .signals.names import parse_features
from .storage.params import parse_duration

__all__ = ["TRAILING_WEEKS", "Attribution", "Baseline", "MonitorConfig", "MonitorSpec", "load_config",
           "parse_duration"]

_RULES = ("binary", "count", "weighted")
DEFAULT_TRACKED = ("ndcg@1", "ndcg@5", "ndcg@10", "mrr@10", "map@10")
#: Weeks a ``trailing`` baseline averages over (the same window of each).
TRAILING_WEEKS = 4
_SERIES = ("model", "model_version", "environment")


def _where(path: str, key: str) -> str:
    return f"{path}: [{key}]" if path else f"[{key}]"


@dataclass(frozen=True)
class Attribution:
    """How event labels become a gain.

    Parameters
    ----------
    rule : {"binary", "count", "weighted"}, default="binary"
        ``"binary"``: 1 when one of the item's labels is a positive class, else 0 (the seed's attribution
        model). ``"count"``: the number of the item's distinct labels that are positive classes (the seed's
        multi-label sum: labels ``['click', 'favorite', 'buy']`` with positive class ``'click'`` give
        ``sum([1, 0, 0]) = 1``). ``"weighted"``: the sum of the weights of the item's distinct labels
        (labels without a weight count 0).
    positive : tuple of str, default=("click",)
        Positive classes for ``"binary"`` and ``"count"``.
    weights : mapping, optional
        Label -> gain for ``"weighted"``, e.g. ``{"click": 1, "favorite": 2, "buy": 3}``.

    Examples
    --------
    >>> Attribution("weighted", weights={"click": 1, "buy": 3}).gain_of(["click", "buy", "click"])
    4.0
    >>> Attribution("binary", positive=("buy",)).gain_of(["click"])
    0.0
    """

    rule: str = "binary"
    positive: tuple[str, ...] = ("click",)
    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.rule not in _RULES:
            raise InvalidParameterError(f"attribution `rule` must be one of {', '.join(_RULES)}; got {self.rule!r}.")
        object.__setattr__(self, "positive", tuple(str(p) for p in self.positive))
        w = {}
        for k, v in dict(self.weights).items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InvalidParameterError(f"attribution weight of {k!r} must be a finite number >= 0; got {v!r}.")
            w[str(k)] = float(v)
        object.__setattr__(self, "weights", w)
        if self.rule == "weighted" and not w:
            raise InvalidParameterError("attribution rule 'weighted' needs `weights`, e.g. {click = 1, buy = 3}.")
        if self.rule != "weighted" and not self.positive:
            raise InvalidParameterError(f"attribution rule {self.rule!r} needs at least one `positive` class.")

    def label_values(self) -> dict[str, float]:
        """Value each label adds to an item's gain (labels absent add 0)."""
        if self.rule == "weighted":
            return dict(self.weights)
        return {p: 1.0 for p in self.positive}

    def gain_of(self, labels: Any) -> float:
        """Gain of one item from its labels (reference implementation, for documentation and tests)."""
        vals = self.label_values()
        s = sum(vals.get(str(lab), 0.0) for lab in set(labels or ()))
        return float(min(s, 1.0)) if self.rule == "binary" else float(s)


@dataclass(frozen=True)
class Baseline:
    """What a window is compared with.

    ``kind`` is ``"environment"`` (groups of that environment, e.g. training, of the same model), ``"range"``
    (the same series over a fixed ``[start, end)``), ``"previous"`` (the same series, the window before) or
    ``"trailing"`` (data-quality monitors only: the same window of each of the :data:`TRAILING_WEEKS` weeks
    before, their mean).
    """

    kind: str = "environment"
    environment: str = "training"
    start: str | None = None
    end: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("environment", "range", "previous", "trailing"):
            raise InvalidParameterError(
                f"baseline kind must be environment, range, previous or trailing; got {self.kind!r}.")
        if self.kind == "range" and not (self.start and self.end):
            raise InvalidParameterError("a baseline range needs both `start` and `end`.")

    @classmethod
    def parse(cls, spec: Any, where: str = "baseline") -> Baseline:
        """From TOML / CLI forms: ``"training"``, ``"previous"``, ``"2026-10-01..2026-10-08"`` or a table."""
        if spec is None:
            return cls()
        if isinstance(spec, Baseline):
            return spec
        if isinstance(spec, str):
            s = spec.strip()
            if s == "previous":
                return cls(kind="previous")
            if s == "trailing":
                return cls(kind="trailing")
            if ".." in s:
                a, _, b = s.partition("..")
                return cls(kind="range", start=a.strip(), end=b.strip())
            if s in ("training", "validation", "production"):
                return cls(kind="environment", environment=s)
            raise InvalidParameterError(f"{where}: expected 'training', 'validation', 'production', 'previous', "
                                        f"'trailing' or 'START..END'; got {spec!r}.")
        if isinstance(spec, Mapping):
            unknown = set(spec) - {"environment", "start", "end", "previous"}
            if unknown:
                raise InvalidParameterError(f"{where}: unknown key(s) {key_names(unknown)}.")
            for key, want in (("environment", str), ("start", (str, _dt.date)), ("end", (str, _dt.date)),
                              ("previous", bool)):
                if key in spec and not isinstance(spec[key], want):
                    kind = "true or false" if want is bool else "a string" if want is str else "a date or a string"
                    raise InvalidParameterError(f"{where}: `{key}` must be {kind}; got {shown(spec[key])}.")
            if spec.get("previous"):
                return cls(kind="previous")
            if "start" in spec or "end" in spec:
                return cls(kind="range", start=str(spec.get("start") or ""), end=str(spec.get("end") or ""))
            return cls(kind="environment", environment=str(spec.get("environment", "training")))
        raise InvalidParameterError(f"{where}: expected a string or a table; got {spec!r}.")

    def describe(self) -> str:
        if self.kind == "environment":
            return f"environment={self.environment}"
        if self.kind == "range":
            return f"{self.start}..{self.end}"
        if self.kind == "trailing":
            return f"the same window of the {TRAILING_WEEKS} weeks before"
        return "previous window"


@dataclass(frozen=True)
class MonitorSpec:
    """One monitor: fire when ``metric`` of a window crosses its limit (see :mod:`ranklens.monitor.kinds`).

    ``metric`` is a measure (``ndcg@10``), a label-free signal (``psi(score)``) or a data-quality metric
    (``volume``, ``label_arrival``, ``quarantine_rate``, ``partial_lists``). ``severity`` (``critical``,
    ``error``, ``warning``, ``info``) goes with its alerts and chooses their webhooks (``[alerts] routes``).
    ``slices = "auto"`` (measures only) judges, instead of each series, every slice of it (the values of the
    slice ``columns``, default all, and their combinations of up to ``max_columns``) with at least
    ``min_support`` lists in the window and in the baseline, the p-values adjusted by ``correction``.
    """

    name: str
    metric: str = "ndcg@10"
    window: str = "day"
    threshold: float | None = None
    relative_drop: float | None = None
    absolute_drop: float | None = None
    min_groups: int = 1
    significance: float | None = None
    where: Mapping[str, Any] = field(default_factory=dict)
    by: tuple[str, ...] = _SERIES
    baseline: Baseline | None = None
    severity: str = "warning"
    slices: str | None = None
    columns: tuple[str, ...] | None = None
    max_columns: int = 2
    min_support: int = 30
    correction: str = "holm"

    def __post_init__(self) -> None:
        check_monitor_types(self)
        if self.baseline is not None and not isinstance(self.baseline, Baseline):
            raise InvalidParameterError(f"monitor {self.name!r}: `baseline` must be a Baseline; "
                                        f"got {shown(self.baseline)}.")
        if self.metric.strip().lower() == "quarantine_rate" and self.by == _SERIES:
            object.__setattr__(self, "by", ())  # the store's: quarantined rows may have no model
        check_monitor_values(self)

    @property
    def kind(self) -> str:
        """``"measure"``, ``"signal"`` or ``"quality"`` (:func:`ranklens.monitor.kinds.monitor_kind`)."""
        return kinds.monitor_kind(self.metric)


# used when the configuration declares no [[monitors]]: production NDCG@10 per model version, daily,
# significantly (Welch, p < 0.05) more than 5% below the training baseline, over at least 30 groups
# and the store's quarantine: more than 5% of a day's rows quarantined at ingest
DEFAULT_MONITORS = (
    MonitorSpec(name="ndcg@10 below training", metric="ndcg@10", window="day", relative_drop=0.05, min_groups=30,
                significance=0.05, where={"environment": "production"}),
    MonitorSpec(name="quarantine above 5%", metric="quarantine_rate", window="day", threshold=0.05, severity="error"),
)


@dataclass(frozen=True)
class MonitorConfig:
    """Everything the monitoring commands read from ``ranklens.toml``."""

    attribution: Attribution = field(default_factory=Attribution)
    convention: str = "ranklens"
    empty: float | str = "skip"
    tracked: tuple[str, ...] = DEFAULT_TRACKED
    baseline: Baseline = field(default_factory=Baseline)
    monitors: tuple[MonitorSpec, ...] = field(default_factory=lambda: DEFAULT_MONITORS)
    webhook: str | None = None
    source: str | None = None
    max_quarantine: float | None = None  # [ingest]: a batch with more of its rows quarantined is kept out
    signals: Mapping[str, Any] = field(default_factory=dict)  # [signals]: items, attribute, catalogue_size
    maturity: _dt.timedelta | None = None
    webhook_format: str = "json"
    webhook_retries: int = 3
    webhook_backoff: float = 1.0
    routes: tuple[Route, ...] = ()  # [[alerts.routes]]: webhooks by severity, model or monitor
    partial: str = "skip"  # [evaluation] partial: lists that lost rows to the quarantine left out ("keep": counted)
    propensity: Mapping[str, Any] = field(default_factory=dict)  # [propensity]: monitor.propensity

    def __post_init__(self) -> None:
        if self.partial not in ("skip", "keep"):
            raise InvalidParameterError(f"evaluation `partial` must be 'skip' or 'keep'; got {self.partial!r}.")
        if self.convention not in CONVENTIONS:
            raise InvalidParameterError(
                f"evaluation `convention` must be one of {', '.join(CONVENTIONS)}; got {self.convention!r}."
            )
        if self.empty not in ("skip", 0, 0.0, 1, 1.0):
            raise InvalidParameterError(f"evaluation `empty` must be 'skip', 0 or 1; got {self.empty!r}.")
        keys = [m.key for t in self.tracked for m in parse_store_measure(t)]
        object.__setattr__(self, "tracked", tuple(dict.fromkeys(keys)))
        object.__setattr__(self, "propensity", parse_propensity(self.propensity, "[propensity]"))
        if self.maturity is not None:
            object.__setattr__(self, "maturity", parse_duration(self.maturity, "[labels] maturity"))
        if self.webhook is not None and (not isinstance(self.webhook, str)
                                         or not self.webhook.startswith(("http://", "https://"))):
            raise InvalidParameterError(f"[alerts] webhook must be a URL starting with http:// or https://; "
                                        f"got {self.webhook!r}.")
        if self.webhook_format not in ("json", "slack"):
            raise InvalidParameterError(
                f"[alerts] webhook_format must be 'json' or 'slack'; got {self.webhook_format!r}.")
        r = self.webhook_retries
        if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= 10:
            raise InvalidParameterError(
                f"[alerts] retries must be an integer in [1, 10] (tries per delivery); got {r!r}.")
        b = self.webhook_backoff
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 <= b <= 60:
            raise InvalidParameterError(f"[alerts] backoff must be a number of seconds in [0, 60]; got {b!r}.")

    def all_routes(self, webhook: str | None = None) -> tuple[Route, ...]:
        """Every webhook of the configuration: ``webhook`` (the route named "webhook", every change) and the
        ``[[alerts.routes]]``; a ``webhook`` given here replaces the route named "webhook"."""
        if webhook is not None:
            return (Route("webhook", webhook, self.webhook_format),) + tuple(
                r for r in self.all_routes() if r.name != "webhook")
        main = () if self.webhook is None or any(r.name == "webhook" for r in self.routes) else (
            Route("webhook", self.webhook, self.webhook_format),)
        return main + tuple(self.routes)

    def convention_obj(self) -> Any:
        """The core Convention the store evaluates with."""
        return get_convention(self.convention, empty=self.empty)

    def fingerprint(self) -> str:
        """Hash of what stored per-group values depend on (attribution and evaluation)."""
        doc = {"attribution": asdict(self.attribution), "convention": self.convention, "empty": self.empty}
        if self.propensity:  # only then: stores without one keep their fingerprint
            doc["propensity"] = dict(self.propensity)
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidParameterError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{path}: not valid TOML: not UTF-8 text (byte {exc.start})") from None
    except RecursionError:  # arrays or tables nested thousands deep: the reader's recursion gives up
        raise InvalidParameterError(f"{path}: not valid TOML for ranklens: values nested too deeply (a "
                                    "configuration nests tables two or three levels).") from None


def _check_keys(table: Any, allowed: set[str], where: str) -> None:
    if not isinstance(table, Mapping):
        raise InvalidParameterError(f"{where}: expected a table of keys; got {shown(table)}.")
    unknown = set(table) - allowed
    if unknown:
        raise InvalidParameterError(f"{where}: unknown key(s) {key_names(unknown)}.")


def load_config(source: str | Path | Mapping[str, Any] | MonitorConfig | None = None) -> MonitorConfig:
    """Read a monitoring configuration from a TOML file (or a dict of the same shape).

    ``None`` reads ``ranklens.toml`` from the current directory when it exists, else the defaults.

    Examples
    --------
    >>> cfg = load_config({"attribution": {"rule": "weighted", "weights": {"click": 1, "favorite": 2, "buy": 3}},
    ...                    "monitors": [{"name": "drop", "metric": "ndcg@10", "relative_drop": 0.1}]})
    >>> cfg.attribution.gain_of(["click", "buy"]), cfg.monitors[0].metric
    (4.0, 'ndcg@10')
    """
    if isinstance(source, MonitorConfig):
        return source
    path = ""
    if source is None:
        p = Path("ranklens.toml")
        if not p.exists():
            return MonitorConfig()
        source = p
    if isinstance(source, (str, Path)):
        p = Path(source)
        if not p.is_file():
            raise InvalidParameterError(f"config file {str(p)!r} does not exist.")
        path = str(p)
        doc = _load_toml(p)
    elif isinstance(source, Mapping):
        doc = dict(source)
    else:
        raise InvalidParameterError(f"`config` must be a path, a dict or a MonitorConfig; got {type(source).__name__}.")
    try:
        return _build(doc, path)
    except InvalidParameterError as exc:
        msg = str(exc)
        if path and not msg.startswith(path):
            msg = f"{path}: {msg}"
        raise InvalidParameterError(msg) from None


def _build(doc: Mapping[str, Any], path: str) -> MonitorConfig:
    _check_keys(doc, {"attribution", "evaluation", "baseline", "monitors", "alerts", "signals", "labels", "ingest",
                      "propensity"},
                path or "config")
    a = doc.get("attribution", {})
    _check_keys(a, {"rule", "positive", "weights"}, _where(path, "attribution"))
    positive = _strings(a.get("positive", ("click",)), "positive", _where(path, "attribution"))
    weights = a.get("weights", {})
    if not isinstance(weights, Mapping):
        raise InvalidParameterError(f"{_where(path, 'attribution')}: `weights` must be a table of label = weight, "
                                    f"e.g. {{ click = 1, buy = 3 }}; got {shown(weights)}.")
    if not isinstance(a.get("rule", "binary"), str):
        raise InvalidParameterError(f"{_where(path, 'attribution')}: `rule` must be a string; got {shown(a['rule'])}.")
    attribution = Attribution(rule=a.get("rule", "binary"), positive=positive, weights=weights)
    e = doc.get("evaluation", {})
    _check_keys(e, {"convention", "empty", "tracked", "partial"}, _where(path, "evaluation"))
    if not isinstance(e.get("convention", "ranklens"), str):
        raise InvalidParameterError(f"{_where(path, 'evaluation')}: `convention` must be a string; got "
                                    f"{shown(e['convention'])}.")
    tracked = _strings(e.get("tracked", DEFAULT_TRACKED), "tracked", _where(path, "evaluation"))
    baseline = Baseline.parse(doc.get("baseline"), _where(path, "baseline"))
    monitors = []
    if not isinstance(doc.get("monitors", []), (list, tuple)):
        raise InvalidParameterError(f"{_where(path, 'monitors')}: expected [[monitors]] tables; got "
                                    f"{shown(doc['monitors'])}.")
    for i, m in enumerate(doc.get("monitors", [])):
        where = _where(path, f"monitors {i + 1}")
        if not isinstance(m, Mapping):
            raise InvalidParameterError(f"{where}: expected a table.")
        _check_keys(m, {f.name for f in MonitorSpec.__dataclass_fields__.values()}, where)
        kw = dict(m)
        kw.setdefault("name", f"{kw.get('metric', 'ndcg@10')} monitor {i + 1}")
        if "by" in kw:
            kw["by"] = _strings(kw["by"], "by", where)
        if "baseline" in kw:
            kw["baseline"] = Baseline.parse(kw["baseline"], where)
        if "columns" in kw:
            kw["columns"] = _strings(kw["columns"], "columns", where)
        monitors.append(MonitorSpec(**kw))
    al, lab = doc.get("alerts", {}), doc.get("labels", {})
    for name, table in (("alerts", al), ("labels", lab)):
        if not isinstance(table, Mapping):
            raise InvalidParameterError(f"{_where(path, name)}: expected a table of keys; got {table!r}.")
    _check_keys(al, {"webhook", "webhook_format", "retries", "backoff", "routes"}, _where(path, "alerts"))
    _check_keys(lab, {"maturity"}, _where(path, "labels"))
    signals = _signals_table(doc.get("signals", {}), path)
    ing = doc.get("ingest", {})
    _check_keys(ing, {"max_quarantine"}, _where(path, "ingest"))
    max_q = ing.get("max_quarantine")
    if max_q is not None and (isinstance(max_q, bool) or not isinstance(max_q, (int, float)) or not 0 <= max_q <= 1):
        raise InvalidParameterError(
            f"{_where(path, 'ingest')}: `max_quarantine` must be a fraction between 0 and 1; got {max_q!r}.")
    return MonitorConfig(
        signals=signals,
        attribution=attribution,
        convention=e.get("convention", "ranklens"),
        empty=e.get("empty", "skip"),
        tracked=tracked,
        baseline=baseline,
        monitors=tuple(monitors) if "monitors" in doc else DEFAULT_MONITORS,
        webhook=al.get("webhook"),
        source=path or None,
        maturity=lab.get("maturity"),
        webhook_format=al.get("webhook_format", "json"),
        webhook_retries=al.get("retries", 3),
        webhook_backoff=al.get("backoff", 1.0),
        max_quarantine=None if max_q is None else float(max_q),
        routes=parse_routes(None, "json", al.get("routes"), _where(path, "alerts")),
        partial=e.get("partial", "skip"),
        propensity=parse_propensity(doc.get("propensity"), _where(path, "propensity")),
    )


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    """A key holding one string or a list of strings, as a tuple; anything else refused naming the key."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InvalidParameterError(f"{where}: `{key}` must be a string or a list of strings; got {shown(value)}.")


def _signals_table(table: Any, path: str) -> dict[str, Any]:
    """``[signals]``: the item attribute file (relative to the TOML file), its attribute column, a catalogue size,
    the feature columns of the events (``features = {price = "numeric", brand = "categorical"}``)."""
    where = _where(path, "signals")
    if not isinstance(table, Mapping):
        raise InvalidParameterError(f"{where}: expected a table.")
    _check_keys(table, {"items", "attribute", "catalogue_size", "features"}, where)
    out: dict[str, Any] = {}
    if "features" in table:
        out["features"] = parse_features(table["features"], where)
    for key in ("items", "attribute"):
        if key in table and not isinstance(table[key], str):
            raise InvalidParameterError(f"{where}: `{key}` must be a string; got {shown(table[key])}.")
    if "items" in table:
        p = Path(str(table["items"]))
        out["items"] = str(Path(path).parent / p) if path and not p.is_absolute() else str(p)
    if "attribute" in table:
        out["attribute"] = str(table["attribute"])
    if "catalogue_size" in table:
        n = table["catalogue_size"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidParameterError(f"{where}: `catalogue_size` must be an integer >= 1; got {n!r}.")
        out["catalogue_size"] = n
    return out
