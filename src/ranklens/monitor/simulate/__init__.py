"""The simulator: a realistic stream of ranking events for ``ranklens monitor`` (``docs/simulator.md``).

``simulator`` (the events), ``model`` (the simulated world, drawn in bulk with numpy), ``checks`` (its
arguments), ``columns`` (Arrow columns and the files written), ``broken`` (the broken-scores decay that
label-free signals see).
The command ``ranklens monitor simulate`` is :mod:`ranklens._cli.monitor_simulate`.
"""

from __future__ import annotations

from .simulator import COLUMNS, FORMATS, LABELS, SLICES, simulate, simulate_counted

__all__ = ["COLUMNS", "FORMATS", "LABELS", "SLICES", "simulate", "simulate_counted"]
