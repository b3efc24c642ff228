"""Label-free signals: their names, their values per window and series, and the monitors that watch them.

``names`` (``psi(score)``, ``coverage@10``...: parsing, which side is worse, a monitor's limits; imports
nothing of the store), ``compute`` (the served rows of a selection and of its baseline, PSI, KS, coverage,
Gini, novelty, ILD per cell), ``arithmetic`` (their definitions on flat arrays), ``features`` (feature
drift), ``monitors`` (monitors on signals, public as :mod:`ranklens.monitor.signal_monitors`).
"""
