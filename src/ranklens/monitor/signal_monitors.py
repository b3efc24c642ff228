"""Monitors on the label-free signals (the public face of :mod:`ranklens.monitor.signals.monitors`)."""

from __future__ import annotations

from .signals.monitors import judge_signal_monitors, run_signal_monitors, signal_specs

__all__ = ["judge_signal_monitors", "run_signal_monitors", "signal_specs"]
