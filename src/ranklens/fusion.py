"""Rank fusion: several runs into one, with ranx's unsupervised methods and normalisations.

``ranklens.fuse(runs, method, norm)`` (also ``ranklens fuse`` on the command line) fuses runs as
``ranx.fuse`` does, by ranx's names and definitions (:data:`METHODS`, :data:`NORMS`), on flat arrays in a
compiled kernel; the fused run is a :class:`~ranklens.data.Rankings` that every function and command reads,
and :func:`ranklens.render.write_run` writes it as a TREC run, CSV, TSV, JSON Lines, JSON or Parquet.
"""

from ._integrations.fusion import (
    METHODS,
    NORMS,
    SUPERVISED,
    FusionMethod,
    fuse,
)

__all__ = [
    "METHODS",
    "NORMS",
    "SUPERVISED",
    "FusionMethod",
    "fuse",
]
