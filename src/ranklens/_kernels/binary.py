"""The measures of a relevance level on one query's rows in ranked order: relevant rows in the top, hit rate,
reciprocal rank, the sum of AP and the AUC, each the expectation over the orders of tied rows (see
:mod:`.positions` for the arrays and the tie modes).
"""

from __future__ import annotations

import math

from numba import njit

from .positions import group_end

__all__ = ["ap_sum", "auc_at", "hit_at", "rel_in_top", "rr_at"]


@njit(cache=True)
def rel_in_top(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    """Expected number of relevant rows among the first ``depth`` positions."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = group_end(score, i, hi, ties)
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
        j = group_end(score, i, hi, ties)
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
        j = group_end(score, i, hi, ties)
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
        j = group_end(score, i, hi, ties)
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
        j = group_end(score, i, hi, ties)
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
