"""One pass per query: order the ranked rows, build the ideal list, compute every measure.

Rows are reached through ``(start, end, idx)`` groups (see :func:`group.segments`),
so nothing is copied or permuted globally. Queries are taken in chunks (parallel
over chunks); a chunk allocates its work buffers once, for its longest list, and
each query works in them: one pass over its rows keeps the ideal labels and the
score threshold of the deepest cutoff and collects the rows that can reach it,
which alone are ordered. Gains, binary relevance and ERR probabilities are
computed on the fly from the labels; discounts come from one table per call.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .codes import (
    DCG,
    ERR,
    GAIN_EXP,
    GAIN_LINEAR,
    GAIN_MAP,
    IDCG,
    NDCG,
    NUM_REL,
    ORDER_BEST,
    ORDER_INPUT,
    ORDER_ITEM_ASC,
    ORDER_ITEM_DESC,
    ORDER_QUICKSORT,
    ORDER_QUICKSORT_REVERSED,
    ORDER_QUICKSORT_TWICE,
    ORDER_WORST,
    RPREC,
)
from .graded import dcg_table
from .group import row_of
from .positions import CHUNKS, chunk_queries, discounts
from .values import binary_value, graded_value, is_graded, label_gain

__all__ = [
    "NUM_REL",
    "GAIN_EXP", "GAIN_LINEAR", "GAIN_MAP", "ORDER_BEST", "ORDER_INPUT", "ORDER_ITEM_ASC", "ORDER_ITEM_DESC",
    "ORDER_QUICKSORT", "ORDER_QUICKSORT_TWICE", "ORDER_WORST", "evaluate_queries", "explain_query", "label_gain",
    "list_stats", "order_into", "order_rows",
]


@njit(cache=True)
def _cmp_bytes(offs, data, a, b):  # pragma: no cover - compiled
    """strcmp of two ids: <0, 0, >0."""
    la = offs[a + 1] - offs[a]
    lb = offs[b + 1] - offs[b]
    m = la if la < lb else lb
    ua, ub = np.uint64(offs[a]), np.uint64(offs[b])  # unsigned: no negative-index check per byte
    for t in range(np.uint64(m)):
        ca = data[ua + t]
        cb = data[ub + t]
        if ca != cb:
            return 1 if ca > cb else -1
    if la == lb:
        return 0
    return 1 if la > lb else -1


@njit(cache=True)
def _item_ties(o, s, rows, mode, offs, data):  # pragma: no cover - compiled
    """Order each group of tied scores of ``o`` by item bytes (trec_eval: descending)."""
    n = o.shape[0]
    sign = -1 if mode == ORDER_ITEM_DESC else 1
    i = 0
    while i < n:
        j = i + 1
        while j < n and s[o[j]] == s[o[i]]:
            j += 1
        # insertion sort of the tie group by item bytes
        for a in range(i + 1, j):
            cur = o[a]
            b = a - 1
            while b >= i and sign * _cmp_bytes(offs, data, rows[o[b]], rows[cur]) > 0:
                o[b + 1] = o[b]
                b -= 1
            o[b + 1] = cur
        i = j


@njit(cache=True)
def order_rows(s, lab, rows, mode, offs, data):  # pragma: no cover - compiled
    n = s.shape[0]
    neg = np.empty(n, np.float64)
    if mode == ORDER_QUICKSORT or mode == ORDER_QUICKSORT_TWICE:
        for i in range(n):
            neg[i] = -s[i]
        o = np.argsort(neg)  # ranx's make_comparable sorts the sorted Run once more: its quicksort moves ties again
        return o if mode == ORDER_QUICKSORT else o[np.argsort(neg[o])]
    if mode == ORDER_QUICKSORT_REVERSED:
        return np.argsort(s)[::-1].copy()
    if mode == ORDER_WORST or mode == ORDER_BEST:
        key = np.empty(n, np.float64)
        for i in range(n):
            v = 0.0 if math.isnan(lab[i]) else lab[i]
            key[i] = v if mode == ORDER_WORST else -v
        o1 = np.argsort(key, kind="mergesort")
        for i in range(n):
            neg[i] = -s[o1[i]]
        o2 = np.argsort(neg, kind="mergesort")
        return o1[o2]
    already = True
    for i in range(1, n):
        if s[i] > s[i - 1]:
            already = False
            break
    if already:
        o = np.arange(n)
    else:
        for i in range(n):
            neg[i] = -s[i]
        o = np.argsort(neg, kind="mergesort")
    if mode == ORDER_ITEM_DESC or mode == ORDER_ITEM_ASC:
        _item_ties(o, s, rows, mode, offs, data)
    return o


_SMALL_SORT = 32  # lists this short are ordered by insertion, in place


@njit(cache=True)
def order_into(s, lab, rows, mode, offs, data, o_buf):  # pragma: no cover - compiled
    """:func:`order_rows`, written into ``o_buf`` for short lists of the stable modes (no allocation):
    an insertion sort by descending score keeps tied rows in input order, as the stable mergesort
    of the negated scores does."""
    n = s.shape[0]
    if n > _SMALL_SORT or not (mode == ORDER_INPUT or mode == ORDER_ITEM_DESC or mode == ORDER_ITEM_ASC):
        return order_rows(s, lab, rows, mode, offs, data)
    o = o_buf[:n]
    for a in range(n):
        v = s[a]
        b = a - 1
        while b >= 0 and s[o[b]] < v:
            o[b + 1] = o[b]
            b -= 1
        o[b + 1] = a
    if mode == ORDER_ITEM_DESC or mode == ORDER_ITEM_ASC:
        _item_ties(o, s, rows, mode, offs, data)
    return o


@njit(cache=True, inline="always")
def _push_top(top, d, v):  # pragma: no cover - compiled
    """Insert ``v`` into ``top[:d]``, the largest values so far in descending order."""
    if v > top[d - 1]:
        j = d - 1
        while j > 0 and top[j - 1] < v:
            top[j] = top[j - 1]
            j -= 1
        top[j] = v


@njit(cache=True, inline="always")
def score_at(score, r, round32):  # pragma: no cover - compiled
    """Row ``r``'s score, rounded to float32 and back with ``round32`` (as numpy's ``astype(np.float32)`` rounds:
    the same numbers as ``columns.round_f32`` writes)."""
    if round32:
        return np.float64(np.float32(score[r]))
    return score[r]


@njit(cache=True)
def _gather_query(
    q, r_start, r_end, r_idx, score, label, order_mode, item_offs, item_data, j_start, j_end, j_idx, j_label,
    ideal_judged, full_depth, any_map, binary, depth_max, il_b, top_b, src_b, rows_b, o_b, s0_b, l0_b, ss_b, sl_b,
    round32,
):  # pragma: no cover - compiled
    """One query's rows that can reach a cutoff, in ranked order (scores ``ss_b[:cut]``, labels ``sl_b[:cut]``),
    its ideal labels descending (``il_b[:nil]``) and the labels they are made of (``src_b[:ni]``). Scores are read
    through :func:`score_at` (``round32``: rounded to float32 on the way), labels as float64 (of any numeric type).

    Returns ``(n, ni, nil, cut, label_sum)``: rows ranked, labels of the ideal list's source, ideal labels kept,
    rows ordered, and the sum of the ranked rows' labels.
    """
    n = r_end[q] - r_start[q]
    ni = j_end[q] - j_start[q] if ideal_judged else n
    # the ideal list to the deepest cutoff (insertion into a small buffer) or, when the whole list
    # counts, sorted (gains are monotone in the label except for a mapping)
    sort_ideal = full_depth or any_map or depth_max >= ni or depth_max > 64
    keep_src = sort_ideal or binary  # else the ideal list is all that is needed of the labels
    # (one array, never rebound: numba's parallel loops mishandle an array rebound in a branch)
    il = il_b[:ni if sort_ideal else depth_max]
    il[:] = -np.inf
    # the score of the depth_max-th row: rows below it cannot reach any cutoff
    cutting = not full_depth and depth_max < n and depth_max <= 64
    top = top_b[:depth_max if cutting else 0]
    top[:] = -np.inf
    src = src_b[:ni]  # the labels the ideal list is made of
    label_sum = 0.0
    partition = not full_depth and depth_max < n and not cutting  # a deep cutoff
    # ranked rows that may reach a cutoff: with a threshold, those at or above the running threshold
    # when met (it only rises, so every row at or above the final one is among them), in input order
    c = 0
    if ideal_judged:
        for t in range(ni):
            v = j_label[row_of(j_idx, j_start[q] + t)]
            src[t] = v
            if not sort_ideal:
                _push_top(il, depth_max, v)
    for t in range(n):
        r = row_of(r_idx, r_start[q] + t)
        lab = float(label[r])
        if not ideal_judged:
            v = 0.0 if math.isnan(lab) else lab  # unjudged: gain 0, as label 0
            label_sum += v
            if keep_src:
                src[t] = v
            if not sort_ideal:
                _push_top(il, depth_max, v)
        elif not math.isnan(lab):
            label_sum += lab
        sc = score_at(score, r, round32)
        if partition:
            continue
        if cutting:
            if not sc >= top[depth_max - 1]:
                continue
            _push_top(top, depth_max, sc)
        rows_b[c] = r
        s0_b[c] = sc
        l0_b[c] = lab
        c += 1
    if sort_ideal:
        ascending = np.sort(src)
        for t in range(ni):
            il[t] = ascending[ni - 1 - t]
    if cutting:  # keep the candidates at or above the final threshold
        th = top[depth_max - 1]
        kept = 0
        for t in range(c):
            if s0_b[t] >= th:
                rows_b[kept] = rows_b[t]
                s0_b[kept] = s0_b[t]
                l0_b[kept] = l0_b[t]
                kept += 1
        c = kept
    elif partition:
        sc_all = np.empty(n, np.float64)
        for t in range(n):
            sc_all[t] = score_at(score, row_of(r_idx, r_start[q] + t), round32)
        th = -np.partition(-sc_all, depth_max - 1)[depth_max - 1]
        for t in range(n):
            r = row_of(r_idx, r_start[q] + t)
            sc = score_at(score, r, round32)
            if sc >= th:
                rows_b[c] = r
                s0_b[c] = sc
                l0_b[c] = label[r]
                c += 1
    s0 = s0_b[:c]
    l0 = l0_b[:c]
    o = order_into(s0, l0, rows_b[:c], order_mode, item_offs, item_data, o_b)
    for t in range(c):
        ss_b[t] = s0[o[t]]
        sl_b[t] = l0[o[t]]
    return n, ni, il.shape[0], c, label_sum


@njit(cache=True, inline="always")
def _gains(sl, il, g, ig, cut, nil, kind, neg_zero, gain_thr, map_keys, map_vals):  # pragma: no cover - compiled
    """The gains of the ordered rows (``g``) and of the ideal list (``ig``, descending) for the gain ``kind``."""
    for t in range(cut):
        g[t] = label_gain(sl[t], kind, neg_zero, gain_thr, map_keys, map_vals)
    for t in range(nil):
        ig[t] = label_gain(il[t], kind, neg_zero, gain_thr, map_keys, map_vals)
    if kind == GAIN_MAP:
        ig[:] = -np.sort(-ig)


@njit(parallel=True, cache=True, nogil=True)
def evaluate_queries(
    r_start, r_end, r_idx, score, label, order_mode, item_offs, item_data,
    j_start, j_end, j_idx, j_label, ideal_judged,
    ties, log_base, neg_zero, gain_thr, err_denom, empty_mode,
    m_code, m_k, m_gain, m_level, m_param, map_keys, map_vals, round32,
):  # pragma: no cover - compiled
    """Return ``(values, empty)``, both ``(n_queries, n_measures)``.

    ``score`` is float64, ``label`` float64 or int64 (an Arrow chunk's buffer as it is); ``round32``: the scores are
    rounded to float32 as they are read (:func:`score_at`), as trec_eval reads them, instead of beforehand.

    ``m_param`` is each measure's parameter (RBP's persistence, the F measure's x, interpolated
    precision's recall level; unused otherwise). Each measure's value is :func:`values.graded_value`'s
    or :func:`values.binary_value`'s, on the query's rows ordered once (:func:`_gather_query`).

    ``empty[q, m]`` is True when query ``q`` has nothing relevant for measure
    ``m``. ``empty_mode``: 0, no positive ideal gain (NDCG/ERR) or no relevant
    item (binary measures); 1, labels of the list summing to 0; 2 / 3, for
    NDCG an ideal DCG at the cutoff equal to 0 / not above 0 (else as 0).
    """
    n_q = r_start.shape[0]
    n_m = m_code.shape[0]
    out = np.zeros((n_q, n_m), np.float64)
    empty = np.zeros((n_q, n_m), np.bool_)
    any_map = False
    binary = False  # a binary measure counts the relevant labels of the whole list
    full_depth = order_mode == ORDER_QUICKSORT or order_mode == ORDER_QUICKSORT_REVERSED or \
        order_mode == ORDER_QUICKSORT_TWICE  # ranx: whole list
    depth_max = 0  # the ideal list and the ordered rows are needed to the deepest cutoff only
    for mi in range(n_m):
        if m_gain[mi] == GAIN_MAP:
            any_map = True
        if m_code[mi] != DCG and m_code[mi] != IDCG and m_code[mi] != NDCG and m_code[mi] != ERR:
            binary = True
        if m_k[mi] <= 0 or m_code[mi] == RPREC or m_code[mi] == NUM_REL:
            full_depth = True
        depth_max = max(depth_max, m_k[mi])
    longest = 1
    for q in range(n_q):
        longest = max(longest, r_end[q] - r_start[q])
        if ideal_judged:
            longest = max(longest, j_end[q] - j_start[q])
    disc = discounts(longest + 1, math.log(log_base))
    # queries in chunks; each chunk allocates its work buffers once, for its longest list (64 queries a chunk at
    # least: a call on one segment of an Arrow table's rows, one of many, allocates few)
    n_chunks = max(1, min(n_q // 64, CHUNKS))
    for ch in prange(n_chunks):
        q0, q1, size = chunk_queries(ch, n_chunks, r_start, r_end)
        if ideal_judged:
            for q in range(q0, q1):
                size = max(size, j_end[q] - j_start[q])
        size = max(size, depth_max if depth_max <= 64 else 1)
        src_b = np.empty(size, np.float64)
        il_b = np.empty(size, np.float64)
        top_b = np.empty(size, np.float64)
        rows_b = np.empty(size, np.int64)
        o_b = np.empty(size, np.int64)
        s0_b = np.empty(size, np.float64)
        l0_b = np.empty(size, np.float64)
        ss_b = np.empty(size, np.float64)
        sl_b = np.empty(size, np.float64)
        g_b = np.empty(size, np.float64)
        rel_b = np.empty(size, np.float64)
        ig_b = np.empty(size, np.float64)
        for q in range(q0, q1):
            n, ni, nil, cut, label_sum = _gather_query(
                q, r_start, r_end, r_idx, score, label, order_mode, item_offs, item_data, j_start, j_end, j_idx,
                j_label, ideal_judged, full_depth, any_map, binary, depth_max, il_b, top_b, src_b, rows_b, o_b,
                s0_b, l0_b, ss_b, sl_b, round32)
            il = il_b[:nil]
            src = src_b[:ni]
            ss = ss_b[:cut]
            sl = sl_b[:cut]
            g = g_b[:cut]
            rel = rel_b[:cut]
            ig = ig_b[:nil]
            last_kind = -1
            for mi in range(n_m):
                code = m_code[mi]
                kind = m_gain[mi]
                if is_graded(code):
                    if kind != last_kind:
                        _gains(sl, il, g, ig, cut, nil, kind, neg_zero, gain_thr, map_keys, map_vals)
                        last_kind = kind
                    v, is_empty = graded_value(code, m_k[mi], n, ss, sl, g, ig, nil, rel, src, ni, cut, ties, disc,
                                               empty_mode, err_denom, m_level[mi])
                else:
                    v, is_empty, regain = binary_value(code, m_k[mi], n, ss, sl, g, rel, src, ni, cut, ties,
                                                       m_level[mi], m_param[mi], kind, neg_zero, gain_thr,
                                                       map_keys, map_vals, ideal_judged)
                    if regain:  # the gains of the DCG family are computed again
                        last_kind = -1
                if empty_mode == 1:
                    is_empty = label_sum == 0.0
                out[q, mi] = v
                empty[q, mi] = is_empty
    return out, empty


@njit(parallel=True, cache=True, nogil=True)
def list_stats(r_start, r_end, r_idx, score, label):  # pragma: no cover - compiled
    """Per query: how many rows share the lowest score (the last tie group), and whether a label > 0."""
    n_q = r_start.shape[0]
    last = np.zeros(n_q, np.int64)
    positive = np.zeros(n_q, np.bool_)
    for q in prange(n_q):
        lo = np.inf
        c = 0
        pos = False
        for t in range(r_start[q], r_end[q]):
            r = row_of(r_idx, t)
            s = score[r]
            if s < lo:
                lo = s
                c = 1
            elif s == lo:
                c += 1
            if label[r] > 0.0:
                pos = True
        last[q] = c
        positive[q] = pos
    return last, positive


@njit(cache=True, nogil=True)
def explain_query(
    score, label, rows, order_mode, item_offs, item_data, ideal_label, ideal_judged,
    ties, log_base, neg_zero, gain_thr, kind, map_keys, map_vals, depth,
):  # pragma: no cover - compiled
    """One query's DCG table, from the functions :func:`evaluate_queries` computes DCG with.

    ``score``, ``label`` and ``rows`` are the query's ranked rows (input order); ``ideal_label``
    its judged labels, used for the ideal list when ``ideal_judged`` (else the ranked rows' labels
    are). ``depth``: the cutoff (0: the whole list). Returns ``(order, gain, gain_used, discount,
    contribution, ideal_order, ideal_gain, ideal_contribution)``: the ranked order (indices into
    the rows, :func:`order_rows` on the whole list), per position the gain, the gain credited with
    ties averaged and the discount and contribution (:func:`dcg_table`); the ideal list's order
    (indices into ``ideal_label``, or into the ranked order; gains descending, equal gains in
    their given order), its gains and each one's contribution to the ideal DCG at ``depth``,
    written ``gain / log_base(position + 1)`` as the explanation has always printed it (the ideal
    DCG of :func:`evaluate_queries` multiplies by the reciprocal: the two may differ in the last bit).
    """
    n = score.shape[0]
    o = order_rows(score, label, rows, order_mode, item_offs, item_data)
    ss = np.empty(n, np.float64)
    g = np.empty(n, np.float64)
    for t in range(n):
        ss[t] = score[o[t]]
        g[t] = label_gain(label[o[t]], kind, neg_zero, gain_thr, map_keys, map_vals)
    ni = ideal_label.shape[0] if ideal_judged else n
    ln_base = math.log(log_base)
    disc = discounts(max(n, ni) + 1, ln_base)
    used, dsc, contrib = dcg_table(ss, g, n if depth <= 0 else depth, ties, disc)
    ig = np.empty(ni, np.float64)
    for t in range(ni):
        ig[t] = label_gain(ideal_label[t], kind, neg_zero, gain_thr, map_keys, map_vals) if ideal_judged else g[t]
    neg = np.empty(ni, np.float64)
    for t in range(ni):
        neg[t] = -ig[t]
    io = np.argsort(neg, kind="mergesort")
    ideal_gain = np.empty(ni, np.float64)
    ic = np.zeros(ni, np.float64)
    for t in range(ni):
        ideal_gain[t] = ig[io[t]]
        if depth <= 0 or t < depth:
            ic[t] = ideal_gain[t] / (math.log(t + 2.0) / ln_base)
    return o, g, used, dsc, contrib, io, ideal_gain, ic
