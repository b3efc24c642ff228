"""Rows as every reader gives them: :class:`Records`, and the two roles they play.

The public face of this module is :mod:`ranklens.records`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from .chunks import FlatColumn, held
from .ids import IdColumn, filter_ids, ids_to_numpy, take_ids

__all__ = ["Judgments", "LeftOut", "Rankings", "Records", "left_out_rows"]


@dataclass(frozen=True)
class LeftOut:
    """Rows an input left out of one side because a value was missing, as ``missing="exclude"`` asks (the
    default refuses them): a row without a label is no judgment, a row without a score or rank is not ranked.

    Attributes
    ----------
    side : {"judgments", "rankings"}
        The side the rows are left out of.
    count : int
        How many rows.
    examples : tuple of str
        The first (up to 5) of them, as ``"query q1 item d2"``.
    source : str
        The input they come from.
    """

    side: str
    count: int
    examples: tuple[str, ...]
    source: str


def left_out_rows(side: str, mask: np.ndarray, qid: Any, item: Any, source: str) -> LeftOut:
    """The :class:`LeftOut` of the rows where ``mask`` holds (ids in any layout; only the first five are read).

    Examples
    --------
    >>> import numpy as np
    >>> left_out_rows("rankings", np.array([False, True]), np.array([1, 1]), np.array([7, 8]), "t").examples
    ('query 1 item 8',)
    """
    idx = np.flatnonzero(mask)
    first = idx[:5]
    q = ids_to_numpy(take_ids(qid, first)) if qid is not None else first
    it = ids_to_numpy(take_ids(item, first)) if item is not None else None
    examples = tuple(f"query {q[t]}" + (f" item {it[t]}" if it is not None else "") for t in range(first.size))
    return LeftOut(side, int(idx.size), examples, source)


@dataclass(frozen=True, eq=False)
class Judgments:
    """Relevance judgments: one row per (query, item) with a graded label.

    Attributes
    ----------
    qid, item : array-like
        Ids of shape ``(n,)``: integers, strings (numpy, lists), Arrow
        string arrays or :class:`~ranklens.data.StrIds` (what the TREC
        readers give), the last two kept as they are, without Python objects.
    label : ndarray of float64, shape (n,)
        Graded relevance. Negative labels mean "judged, not relevant" unless
        the convention says otherwise.
    source : str or None
        Where the rows came from, for messages.

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens.records import Judgments
    >>> Judgments(np.array([1, 1, 2]), np.array([7, 8, 7]), np.array([2.0, 0.0, 1.0]), source="hand")
    Judgments(3 rows, 2 queries, from hand)
    """

    qid: Any
    item: Any
    #: (an Arrow column's chunks made one array on first read: :class:`~ranklens._input.chunks.FlatColumn`)
    label: FlatColumn[np.ndarray] = FlatColumn()
    source: str | None = None
    #: rows the input left out because their label was missing (``missing="exclude"``)
    left_out: tuple[LeftOut, ...] = ()
    #: the reader that made ``label`` found it finite (no NaN, no infinity): an evaluation that made these judgments
    #: itself need not check it again
    finite: bool = field(default=False, repr=False)

    def __len__(self) -> int:
        return int(held(self, "label").shape[0])

    def __repr__(self) -> str:
        nq = IdColumn.of(self.qid).n_unique() if len(self) else 0
        return f"Judgments({len(self)} rows, {nq} queries{', from ' + self.source if self.source else ''})"


@dataclass(frozen=True, eq=False)
class Rankings:
    """Ranked lists: one row per (query, item) with a score and/or a rank.

    ``qid`` and ``item`` are ``None`` when the rankings are a bare vector of
    scores aligned row by row with the judgments (LETOR predictions).
    A higher score is better; a lower rank is better (rank 1 first). When
    both are given the score decides, as trec_eval does.

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens.records import Rankings
    >>> r = Rankings(np.array([1, 1]), np.array([7, 8]), rank=np.array([2.0, 1.0]))
    >>> r.order_key().tolist()
    [-2.0, -1.0]
    """

    qid: Any
    item: Any
    #: (as :attr:`Judgments.label`, made one array on first read)
    score: FlatColumn[np.ndarray | None] = FlatColumn(required=False)
    rank: np.ndarray | None = None
    source: str | None = None
    #: labels of these very rows (NaN: not judged) when one table holds both;
    #: spares the join with the judgments
    label: FlatColumn[np.ndarray | None] = FlatColumn(required=False)
    #: ids of queries the input declares with no ranked item (a dict's ``{query: {}}``, as ranx,
    #: pytrec_eval and ir_measures take it): ranked queries whose list is empty
    empty_qids: Any = None
    #: the rows are in the order a ``ranx.Run`` keeps them (sorted when the Run was built), the order
    #: ranx evaluates: the ``ranx`` tie rule then keeps it instead of sorting again
    in_ranx_order: bool = False
    #: rows the input left out because their score or rank was missing (``missing="exclude"``)
    left_out: tuple[LeftOut, ...] = ()
    #: ``score`` is an array the reader made for these rankings alone (a table's column copied chunk by chunk),
    #: not the caller's memory: an evaluation that made these rankings itself may round it in place
    own_scores: bool = field(default=False, repr=False)
    #: the reader that made ``score`` (or ``rank``, without scores) found it finite (no NaN, no infinity): an
    #: evaluation that made these rankings itself need not check it again
    finite: bool = field(default=False, repr=False)

    def __len__(self) -> int:
        arr = held(self, "score")
        arr = arr if arr is not None else self.rank
        return 0 if arr is None else int(arr.shape[0])

    def __repr__(self) -> str:
        return f"Rankings({len(self)} rows{', from ' + self.source if self.source else ''})"

    def order_key(self) -> np.ndarray:
        """Higher-is-better key: the score, or minus the rank."""
        if self.score is not None:
            return self.score
        assert self.rank is not None
        return -self.rank.astype(np.float64)


@dataclass(frozen=True, eq=False)
class Records:
    """The rows one input gives: ids and the value columns it has.

    Attributes
    ----------
    qid, item : array-like or None
        Ids of shape ``(n,)`` (see :class:`Judgments`); both ``None`` for a
        bare vector of scores aligned with the judgments' rows.
    label, score, rank : ndarray of float64 or None
        The value columns the input has (a rank is kept only when there is no
        score: the score decides).
    source : str or None
        Where the rows came from, for messages.
    judged, ranked : ndarray of bool or None
        Which rows play each role, when some rows lack a label / a score or rank (``missing="exclude"``)
        (``None``: every row).
    left_out : tuple of LeftOut
        What those masks leave out, per side, to be counted in ``Result.excluded``.

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens.records import Records
    >>> rec = Records(np.array([1, 1, 2]), np.array([7, 8, 7]), label=np.array([1.0, np.nan, 0.0]),
    ...               score=np.array([0.5, 0.4, 0.3]), judged=np.array([True, False, True]))
    >>> rec.judgments().label.tolist(), len(rec.rankings())
    ([1.0, 0.0], 3)
    """

    qid: Any
    item: Any
    #: (as :attr:`Judgments.label`, made one array on first read)
    label: FlatColumn[np.ndarray | None] = FlatColumn(required=False)
    score: FlatColumn[np.ndarray | None] = FlatColumn(required=False)
    rank: np.ndarray | None = None
    source: str | None = None
    judged: np.ndarray | None = None
    ranked: np.ndarray | None = None
    #: ids of queries declared with no row (see :attr:`Rankings.empty_qids`)
    empty_qids: Any = None
    #: see :attr:`Rankings.in_ranx_order`
    in_ranx_order: bool = False
    left_out: tuple[LeftOut, ...] = ()
    #: see :attr:`Rankings.own_scores`
    own_scores: bool = field(default=False, repr=False)
    #: the value columns (``"label"``, ``"score"``, ``"rank"``) the reader found finite (see :attr:`Judgments.finite`)
    finite: tuple[str, ...] = field(default=(), repr=False)

    @property
    def has_labels(self) -> bool:
        """Whether the rows carry relevance labels."""
        return held(self, "label") is not None

    @property
    def has_order(self) -> bool:
        """Whether the rows carry a score or a rank."""
        return held(self, "score") is not None or self.rank is not None

    def judgments(self) -> Judgments:
        """The judged rows (requires labels)."""
        if not self.has_labels:
            raise InputError(f"{self.source or 'the input'} has no relevance labels: it cannot be the judgments.")
        gone = tuple(x for x in self.left_out if x.side == "judgments")
        finite = "label" in self.finite
        if self.judged is None:
            return Judgments(self.qid, self.item, held(self, "label"), source=self.source, left_out=gone,
                             finite=finite)
        m, label = self.judged, self.label
        assert label is not None
        return Judgments(filter_ids(self.qid, m), filter_ids(self.item, m), label[m], source=self.source,
                         left_out=gone, finite=finite)

    def rankings(self) -> Rankings:
        """The ranked rows (requires a score or a rank), with their labels when the records hold both."""
        if not self.has_order:
            raise InputError(f"{self.source or 'the input'} has no score or rank: it cannot be the rankings.")
        gone = tuple(x for x in self.left_out if x.side == "rankings")
        finite = ("score" if held(self, "score") is not None else "rank") in self.finite
        if self.ranked is None:
            return Rankings(self.qid, self.item, score=held(self, "score"), rank=self.rank, source=self.source,
                            label=held(self, "label"), empty_qids=self.empty_qids, in_ranx_order=self.in_ranx_order,
                            left_out=gone, own_scores=self.own_scores, finite=finite)
        m = self.ranked
        return Rankings(filter_ids(self.qid, m), filter_ids(self.item, m),
                        score=self.score[m] if self.score is not None else None,
                        rank=self.rank[m] if self.rank is not None else None, source=self.source,
                        label=self.label[m] if self.label is not None else None, empty_qids=self.empty_qids,
                        in_ranx_order=self.in_ranx_order, left_out=gone, finite=finite)
