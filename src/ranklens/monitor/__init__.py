"""Production monitoring: ranking events and their outcomes in a DuckDB store, NDCG over time, alerts, root cause.

Needs the ``monitor`` extra (``pip install 'ranklens[monitor]'``: duckdb, scipy). See ``docs/monitoring.md``.

>>> from ranklens.monitor import Attribution
>>> Attribution("count", positive=("click",)).gain_of(["click", "favorite", "buy"])  # the seed's sum([1, 0, 0])
1.0
"""

from __future__ import annotations

from .alerts import Alert
from .config import Attribution, Baseline, MonitorConfig, MonitorSpec, load_config
from .simulate import simulate
from .store import CheckResult, IngestSummary, Store

__all__ = [
    "Alert",
    "Attribution",
    "Baseline",
    "CheckResult",
    "IngestSummary",
    "MonitorConfig",
    "MonitorSpec",
    "Store",
    "load_config",
    "simulate",
]
