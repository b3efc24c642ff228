"""Where alert changes go: webhooks chosen by the alert's severity, model or monitor.

``[alerts]`` of the configuration::

    [alerts]
    webhook = "https://hooks.example/all"        # every change (the route named "webhook")
    webhook_format = "json"

    [[alerts.routes]]
    name = "pager"                                # default: the webhook's address
    webhook = "https://events.pagerduty.example/ranklens"
    format = "json"                               # or "slack"
    severities = ["critical", "error"]            # only these severities (default: every one)
    models = ["ranker"]                           # only alerts of these models (default: every model)
    monitors = ["ndcg@10 below training"]         # only these monitors (default: every monitor)

A change goes to every route that matches it (all the conditions given hold). This module imports nothing
of the store.

Examples
--------
>>> r = Route("pager", "https://example.org/hook", severities=("critical",))
>>> r.matches({"severity": "critical", "series": {"model": "ranker"}, "monitor": "m"}), r.matches({"severity": "info"})
(True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError
from .config_checks import key_names
from .kinds import SEVERITIES

__all__ = ["FORMATS", "Route", "parse_routes"]

#: Payload formats of a webhook.
FORMATS = ("json", "slack")


@dataclass(frozen=True)
class Route:
    """A webhook and the alert changes it receives."""

    name: str
    webhook: str
    format: str = "json"
    severities: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    monitors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        where = f"[alerts] route {self.name!r}"
        if not isinstance(self.webhook, str) or not self.webhook.startswith(("http://", "https://")):
            raise InvalidParameterError(f"{where}: `webhook` must be a URL starting with http:// or https://; "
                                        f"got {self.webhook!r}.")
        if self.format not in FORMATS:
            raise InvalidParameterError(f"{where}: `format` must be 'json' or 'slack'; got {self.format!r}.")
        bad = [s for s in self.severities if s not in SEVERITIES]
        if bad:
            raise InvalidParameterError(f"{where}: unknown severity {bad[0]!r}; severities: {', '.join(SEVERITIES)}.")

    def matches(self, change: Mapping[str, Any]) -> bool:
        """Whether an alert change (its ``severity``, ``series`` and ``monitor``) goes to this route."""
        if self.severities and change.get("severity") not in self.severities:
            return False
        if self.models and (change.get("series") or {}).get("model") not in self.models:
            return False
        return not self.monitors or change.get("monitor") in self.monitors


def _names(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    v = table.get(key, ())
    if isinstance(v, str):
        v = (v,)
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise InvalidParameterError(f"{where}: `{key}` must be a list of names; got {v!r}.")
    return tuple(v)


def parse_routes(webhook: str | None, webhook_format: str, routes: Any, where: str = "[alerts]") -> tuple[Route, ...]:
    """The routes of ``[alerts]``: ``webhook`` (every change, named "webhook") and each ``[[alerts.routes]]``."""
    out: list[Route] = []
    if webhook is not None:
        out.append(Route("webhook", webhook, webhook_format))
    if routes is None:
        return tuple(out)
    if not isinstance(routes, (list, tuple)):
        raise InvalidParameterError(f"{where}: `routes` must be a list of tables ([[alerts.routes]]).")
    for i, r in enumerate(routes):
        if not isinstance(r, Mapping):
            raise InvalidParameterError(f"{where}: route {i + 1} must be a table; got {r!r}.")
        unknown = set(r) - {"name", "webhook", "format", "severities", "models", "monitors"}
        if unknown:
            raise InvalidParameterError(f"{where}: route {i + 1}: unknown key(s) {key_names(unknown)}.")
        if "webhook" not in r:
            raise InvalidParameterError(f"{where}: route {i + 1} needs a `webhook`.")
        rw = f"{where} route {i + 1}"
        out.append(Route(str(r.get("name") or r["webhook"]), r["webhook"], str(r.get("format", "json")),
                         _names(r, "severities", rw), _names(r, "models", rw), _names(r, "monitors", rw)))
    names = [r.name for r in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidParameterError(f"{where}: two routes are named {twice[0]!r}; give each a `name`.")
    return tuple(out)
