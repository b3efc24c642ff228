"""Per-measure arithmetic on one query's rows in ranked order.

:func:`ranklens._kernels.fused.evaluate_queries` orders a query's rows and
calls these helpers on its local arrays (rows ``lo:hi``):

* ``score``  - the ordering score, used only to find groups of tied rows;
* ``gain``   - the graded gain of the row (0 for unjudged rows);
* ``rel``    - 1.0 if the row counts as relevant for binary measures, else 0.0;
* ``p``      - the ERR stopping probability of the row;

and ``ideal`` holds the ideal list's gains in descending order.

Tie modes: ``TIES_NONE`` takes the rows in the given order; ``TIES_AVERAGE``
returns, for every measure, the exact expectation over all orders of each
group of tied rows (McSherry & Najork 2008 for DCG and precision; the same
idea carried to AP, RR, hit rate and ERR); ``TIES_SHARED_RANK`` gives every
row of a tied group the truncated mean position of the group (Evidently's
rule, DCG-family only).

A measure whose normaliser is zero yields 0 here; the caller applies the
convention's rule for such queries. Nothing here aggregates over queries.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .codes import (
    AP,
    DCG,
    ERR,
    HIT,
    IDCG,
    NDCG,
    NUM_REL_RET,
    NUM_RET,
    RECALL,
    RPREC,
    RR,
    TIES_AVERAGE,
    TIES_NONE,
    TIES_SHARED_RANK,
    P,
)

__all__ = [
    "AP",
    "DCG",
    "ERR",
    "HIT",
    "IDCG",
    "NDCG",
    "NUM_REL_RET",
    "NUM_RET",
    "P",
    "RECALL",
    "RPREC",
    "RR",
    "TIES_AVERAGE",
    "TIES_NONE",
    "TIES_SHARED_RANK",
    "ap_sum",
    "auc_at",
    "bpref_sum",
    "chunk_queries",
    "dcg_at",
    "dcg_table",
    "discounts",
    "err_at",
    "hit_at",
    "idcg_at",
    "infap_sum",
    "iprec_at",
    "pt11_at",
    "rbp_at",
    "rel_in_top",
    "rr_at",
]


@njit(cache=True, inline="always")
def _disc(pos, ln_base):  # pragma: no cover - compiled
    # 1 / log_base(pos + 1), written as scikit-learn writes it.
    return 1.0 / (math.log(pos + 1.0) / ln_base)


@njit(cache=True)
def discounts(n, ln_base):  # pragma: no cover - compiled
    """``disc[p] = _disc(p)`` for positions ``1 <= p <= n`` (``disc[0]`` unused): one logarithm per
    position per call, not per query."""
    disc = np.zeros(n + 1, np.float64)
    for p in range(1, n + 1):
        disc[p] = _disc(p, ln_base)
    return disc


@njit(cache=True)
def _group_end(score, i, hi, ties):  # pragma: no cover - compiled
    j = i + 1
    if ties != TIES_NONE:
        s = score[i]
        while j < hi and score[j] == s:
            j += 1
    return j


@njit(cache=True)
def dcg_at(score, gain, lo, hi, depth, ties, disc):  # pragma: no cover - compiled
    """DCG to ``depth``; ``disc[p]`` is the discount of position ``p`` (:func:`discounts`)."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        if ties == TIES_SHARED_RANK:
            shared = int(pos + (m + 1) / 2.0)
            if shared <= depth:
                d = disc[shared]
                for t in range(i, j):
                    total += gain[t] * d
        else:
            sg = 0.0
            for t in range(i, j):
                sg += gain[t]
            if sg != 0.0:
                last = min(pos + m, depth)
                ds = 0.0
                for p in range(pos + 1, last + 1):
                    ds += disc[p]
                total += sg / m * ds
        pos += m
        i = j
    return total


@njit(cache=True)
def dcg_table(score, gain, depth, ties, disc):  # pragma: no cover - compiled
    """The terms :func:`dcg_at` sums, position by position, for one query's rows in ranked order.

    Returns ``(gain_used, discount, contribution)``: the gain a position is credited with (under
    ``TIES_AVERAGE`` the mean gain of its tie group, as :func:`dcg_at` takes it), its discount
    (under ``TIES_SHARED_RANK`` that of the group's shared rank) and its contribution to DCG at
    ``depth`` (0 from ``depth`` on, and for a shared-rank group whose rank is beyond ``depth``).
    """
    n = score.shape[0]
    used = np.zeros(n, np.float64)
    dsc = np.zeros(n, np.float64)
    contrib = np.zeros(n, np.float64)
    pos = 0
    i = 0
    while i < n:
        j = _group_end(score, i, n, ties)
        m = j - i
        if ties == TIES_SHARED_RANK:
            shared = int(pos + (m + 1) / 2.0)
            for t in range(i, j):
                used[t] = gain[t]
                dsc[t] = disc[shared]
                if shared <= depth:
                    contrib[t] = gain[t] * disc[shared]
        else:
            sg = 0.0
            for t in range(i, j):
                sg += gain[t]
            for t in range(i, j):
                used[t] = gain[t] if m == 1 else sg / m
                dsc[t] = disc[t + 1]
                if t < depth:
                    contrib[t] = used[t] * dsc[t]
        pos += m
        i = j
    return used, dsc, contrib


@njit(cache=True)
def idcg_at(ideal, lo, hi, depth, disc):  # pragma: no cover - compiled
    total = 0.0
    last = min(hi - lo, depth)
    for t in range(last):
        total += ideal[lo + t] * disc[t + 1]
    return total


@njit(cache=True)
def rel_in_top(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    """Expected number of relevant rows among the first ``depth`` positions."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0.0
        for t in range(i, j):
            r += rel[t]
        inside = min(m, depth - pos)
        total += r * inside / m
        pos += m
        i = j
    return total


@njit(cache=True)
def hit_at(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0
        for t in range(i, j):
            if rel[t] > 0.0:
                r += 1
        if r > 0:
            inside = min(m, depth - pos)
            if inside == m:
                return 1.0
            # P(no relevant among the first `inside` of the group)
            none = 1.0
            for u in range(inside):
                none *= (m - r - u) / (m - u)
                if none <= 0.0:
                    none = 0.0
                    break
            return 1.0 - none
        pos += m
        i = j
    return 0.0


@njit(cache=True)
def rr_at(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0
        for t in range(i, j):
            if rel[t] > 0.0:
                r += 1
        if r > 0:
            total = 0.0
            none = 1.0
            for t in range(m - r + 1):
                if pos + t + 1 > depth:
                    break
                total += none * r / (m - t) / (pos + t + 1)
                none *= (m - r - t) / (m - t)
            return total
        pos += m
        i = j
    return 0.0


@njit(cache=True)
def ap_sum(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    """Expected sum of precision at the ranks of relevant rows (before / R)."""
    total = 0.0
    pos = 0
    before = 0.0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0.0
        for t in range(i, j):
            r += rel[t]
        if r > 0.0:
            inside = min(m, depth - pos)
            frac = (r - 1.0) / (m - 1.0) if m > 1 else 0.0
            s = 0.0
            for t in range(1, inside + 1):
                s += (before + 1.0 + (t - 1) * frac) / (pos + t)
            total += r / m * s
        before += r
        pos += m
        i = j
    return total


@njit(cache=True)
def err_at(score, p, lo, hi, depth, ties):  # pragma: no cover - compiled
    total = 0.0
    go_on = 1.0  # probability that the user reaches the current group
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        inside = min(m, depth - pos)
        if m == 1:
            total += go_on * p[i] / (pos + 1)
            go_on *= 1.0 - p[i]
        else:
            # distinct stopping probabilities in the group, with counts
            vals = np.empty(m, np.float64)
            cnts = np.zeros(m, np.int64)
            nv = 0
            for t in range(i, j):
                found = -1
                for v in range(nv):
                    if vals[v] == p[t]:
                        found = v
                        break
                if found < 0:
                    vals[nv] = p[t]
                    cnts[nv] = 1
                    nv += 1
                else:
                    cnts[found] += 1
            # E[ p_x * prod_{y before x in group} (1 - p_y) ] for a uniformly
            # random order: average over the item x at the position and over
            # the random subset of the others in front of it.
            jmax = inside  # subsets of size 0 .. inside-1
            contrib = np.zeros(jmax, np.float64)
            for v in range(nv):
                if vals[v] == 0.0:
                    continue
                mean = np.zeros(jmax, np.float64)  # mean over j-subsets of others
                mean[0] = 1.0
                n_added = 0
                for w in range(nv):
                    c = cnts[w] - 1 if w == v else cnts[w]
                    a = 1.0 - vals[w]
                    for _ in range(c):
                        n_added += 1
                        top = min(n_added, jmax - 1)
                        for jj in range(top, 0, -1):
                            mean[jj] = ((n_added - jj) * mean[jj] + jj * a * mean[jj - 1]) / n_added
                weight = cnts[v] * vals[v] / m
                for jj in range(jmax):
                    contrib[jj] += weight * mean[jj]
            for t in range(inside):
                total += go_on * contrib[t] / (pos + t + 1)
            for t in range(i, j):
                go_on *= 1.0 - p[t]
        pos += m
        i = j
    return total


@njit(cache=True)
def rbp_at(score, gain, lo, hi, depth, ties, p):  # pragma: no cover - compiled
    """Rank-biased precision to ``depth``: ``(1 - p) * sum of gain * p**(position - 1)``; a tie group's
    mean gain at each of its positions (the expectation over its orders)."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        sg = 0.0
        for t in range(i, j):
            sg += gain[t]
        if sg != 0.0:
            last = min(pos + m, depth)
            ws = 0.0
            for q in range(pos, last):
                ws += p**q
            total += sg / m * ws
        pos += m
        i = j
    return (1.0 - p) * total


@njit(cache=True)
def bpref_sum(score, lab, lo, hi, ties, level, big_r, n_nonrel, negative_judged):  # pragma: no cover
    """Sum over the relevant rows of ``1 - min(N, R) / min(n_nonrel, R)``, N the judged non-relevant rows
    above (1 when N is 0): trec_eval's bpref before the division by R.

    Rows without a label (NaN) are skipped, and so are negative labels (trec_eval's "in the pool but not
    judged") unless ``negative_judged`` (ranx: non-relevant). In a tie group, the number of the group's
    non-relevant rows above one of its relevant rows is uniform on 0..b (b: the group's non-relevant rows),
    so the expectation over the group's orders is a mean over b + 1 values.
    """
    denom = min(n_nonrel, big_r)
    total = 0.0
    before = 0
    i = lo
    while i < hi:
        j = _group_end(score, i, hi, ties)
        a = 0
        b = 0
        for t in range(i, j):
            v = lab[t]
            if math.isnan(v) or (v < 0.0 and not negative_judged):
                continue
            if v >= level:
                a += 1
            else:
                b += 1
        if a > 0:
            e = 0.0
            for u in range(b + 1):
                x = before + u
                e += 1.0 if (x == 0 or denom == 0) else 1.0 - min(x, big_r) / denom
            total += a * e / (b + 1)
        before += b
        i = j
    return total


_INFAP_EPSILON = 0.00001  # trec_eval.h


@njit(cache=True)
def infap_sum(lab, lo, hi, level):  # pragma: no cover - compiled
    """trec_eval's inferred AP before the division by R, on rows in ranked order: NaN = not in the pool
    (skipped, but counted in the rank), negative = in the pool but not judged."""
    rel_so_far = 0
    nonrel = 0
    unjudged = 0
    total = 0.0
    for j in range(hi - lo):
        v = lab[lo + j]
        if math.isnan(v):
            continue
        if v < 0.0:
            unjudged += 1
            continue
        if v < level:
            nonrel += 1
            continue
        rel_so_far += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel_so_far - 1 + nonrel + unjudged) / fj) * (
                (rel_so_far - 1 + _INFAP_EPSILON) / (rel_so_far - 1 + nonrel + 2 * _INFAP_EPSILON))
    return total


@njit(cache=True, inline="always")
def _recall_cut(recall, big_r, v9):  # pragma: no cover - compiled
    """The number of relevant items a recall level stands for: C's lround (trec_eval 10) or
    ``(long)(x + 0.9)`` (trec_eval 9)."""
    x = recall * big_r
    if v9:
        return int(x + 0.9)
    f = math.floor(x)
    return int(f + 1.0) if x - f >= 0.5 else int(f)


@njit(cache=True)
def iprec_at(rel, lo, hi, recall, big_r, v9):  # pragma: no cover - compiled
    """Interpolated precision at a recall level (trec_eval's iprec_at_recall), rows in ranked order:
    the largest precision at or below the rank where the level's number of relevant items is reached
    (0 when the list never reaches it)."""
    n = hi - lo
    if n == 0:
        return 0.0
    cut = _recall_cut(recall, big_r, v9)
    nrr = 0
    for t in range(lo, hi):
        if rel[t] > 0.0:
            nrr += 1
    if cut > nrr:
        return 0.0
    ip = nrr / n
    rsf = nrr
    i = n
    while i > 0 and rsf > 0:
        precis = rsf / i
        if ip < precis:
            ip = precis
        if rel[lo + i - 1] > 0.0:
            if rsf == cut:
                return ip
            rsf -= 1
        i -= 1
    return ip


@njit(cache=True)
def pt11_at(rel, lo, hi, big_r, v9):  # pragma: no cover - compiled
    """trec_eval's 11pt_avg: interpolated precision at the recall levels 0.0, 0.1, ... 1.0, averaged
    (summed from the highest level down, as trec_eval sums)."""
    levels = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    total = 0.0
    for t in range(10, -1, -1):
        total += iprec_at(rel, lo, hi, levels[t], big_r, v9)
    return total / 11.0


@njit(cache=True)
def auc_at(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    """``(auc, defined)`` of the first ``depth`` positions: the share of (relevant, non-relevant) pairs
    ordered relevant first, tied pairs counting 1/2 (the expectation over the orders of each tie group);
    not defined without both a relevant and a non-relevant row. A tie group cut by ``depth`` contributes a
    uniformly random subset of its rows: the expectation is taken over the hypergeometric number of its
    relevant rows inside (over the draws for which the AUC is defined)."""
    correct = 0.0
    npos = 0
    nneg = 0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        a = 0
        for t in range(i, j):
            if rel[t] > 0.0:
                a += 1
        b = m - a
        inside = min(m, depth - pos)
        if inside == m:
            correct += npos * b + 0.5 * a * b
            npos += a
            nneg += b
        else:
            # x relevant rows among the `inside` taken: P(x) = C(a, x) C(b, inside - x) / C(m, inside)
            expect = 0.0
            p_def = 0.0
            for x in range(max(0, inside - b), min(a, inside) + 1):
                lp = (math.lgamma(a + 1.0) - math.lgamma(x + 1.0) - math.lgamma(a - x + 1.0)
                      + math.lgamma(b + 1.0) - math.lgamma(inside - x + 1.0) - math.lgamma(b - inside + x + 1.0)
                      - math.lgamma(m + 1.0) + math.lgamma(inside + 1.0) + math.lgamma(m - inside + 1.0))
                pr = math.exp(lp)
                tp = npos + x
                tn = nneg + inside - x
                if tp > 0 and tn > 0:
                    expect += pr * (correct + npos * (inside - x) + 0.5 * x * (inside - x)) / (tp * tn)
                    p_def += pr
            if p_def > 0.0:
                return expect / p_def, True
            return 0.0, False
        pos += m
        i = j
    if npos == 0 or nneg == 0:
        return 0.0, False
    return correct / (npos * nneg), True


@njit(cache=True, inline="always")
def chunk_queries(ch, n_chunks, r_start, r_end):  # pragma: no cover - compiled
    """Chunk ``ch`` of ``n_chunks``: its queries ``q0:q1`` and its longest list (>= 1), to size its buffers."""
    n_q = r_start.shape[0]
    q0 = ch * n_q // n_chunks
    q1 = (ch + 1) * n_q // n_chunks
    size = 1
    for q in range(q0, q1):
        size = max(size, r_end[q] - r_start[q])
    return q0, q1, size
