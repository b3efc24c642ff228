"""Integer codes shared by the kernels and their callers (plain Python: importing this loads no compiler).

Measures, tie rules, gain kinds and ordering modes are passed to the kernels as these integers.
"""

from __future__ import annotations

__all__ = [
    "AP", "AP_MIN", "DCG", "ERR", "GAIN_EXP", "GAIN_LINEAR", "GAIN_MAP", "HIT", "IDCG", "NDCG", "NUM_REL",
    "NUM_REL_RET", "NUM_RET", "ORDER_BEST", "ORDER_INPUT", "ORDER_ITEM_ASC", "ORDER_ITEM_DESC", "ORDER_QUICKSORT",
    "ORDER_QUICKSORT_REVERSED", "ORDER_WORST", "P", "P_DEPTH", "RECALL", "RPREC", "RR", "TIES_AVERAGE",
    "TIES_NONE", "TIES_SHARED_RANK",
]

# measures
DCG, IDCG, NDCG, AP, RR, P, RECALL, HIT, ERR, RPREC, NUM_RET, NUM_REL_RET, NUM_REL = range(13)
# AP over min(R, depth) (XGBoost, LightGBM, CatBoost); precision over min(k, n) (XGBoost, CatBoost)
AP_MIN, P_DEPTH = 13, 14
# tied scores: in the given order, averaged over the orders of each tie group, or one shared rank
TIES_NONE, TIES_AVERAGE, TIES_SHARED_RANK = 0, 1, 2
# how a query's rows are put in ranked order
ORDER_INPUT, ORDER_QUICKSORT, ORDER_WORST, ORDER_BEST, ORDER_ITEM_DESC, ORDER_ITEM_ASC = range(6)
# ranx.evaluate given plain dicts: numba's quicksort of the scores ascending, reversed
ORDER_QUICKSORT_REVERSED = 6
# gain of a label
GAIN_LINEAR, GAIN_EXP, GAIN_MAP = range(3)
