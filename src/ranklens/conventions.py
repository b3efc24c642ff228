"""Conventions: every silent choice behind an "NDCG" number, made explicit.

A :class:`Convention` is a frozen record of the choices that make libraries
disagree (gain, ties, ideal list, empty queries, which queries are averaged,
numeric precision...). ``CONVENTIONS`` holds the named presets that reproduce
peer libraries; ``"ranklens"`` is the default. See ``docs/conventions.md``.
"""

from ._defs.conventions import (
    AGGREGATE_FIELDS,
    VALUE_FIELDS,
    Convention,
    GainSpec,
)
from ._defs.presets import (
    CONVENTIONS,
    PEERS,
    Peer,
    get_convention,
)

__all__ = [
    "AGGREGATE_FIELDS",
    "CONVENTIONS",
    "Convention",
    "GainSpec",
    "PEERS",
    "Peer",
    "VALUE_FIELDS",
    "get_convention",
]
