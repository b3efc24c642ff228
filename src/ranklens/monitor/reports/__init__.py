"""The monitoring store's reports: each measure per window and series, baselines, slices, groups, explain.

``reports`` (the store's report methods), ``aggregates`` (a measure's per-list values into the store's
value, interval and test), ``baseline`` (the one rule choosing each series' baseline), ``slices`` (root
cause over slice columns), ``links`` (each slice row's groups command), ``explain`` (one served list),
``stats`` (Welch, bootstrap intervals). Internal: the public names are in :mod:`ranklens.monitor`.
"""
