"""Integer codes shared by the kernels and their callers (plain Python: importing this loads no compiler).

Measures, tie rules, gain kinds and ordering modes are passed to the kernels as these integers.
"""

from __future__ import annotations

__all__ = [
    "AP", "AP_MIN", "AUC", "BINARY", "BING", "BPREF", "BPREF_NEG", "DCG", "ERR", "FUSE_ANZ", "FUSE_BORDA",
    "FUSE_CONDORCET", "FUSE_GMNZ", "FUSE_ISR", "FUSE_LOGN_ISR", "FUSE_LOG_ISR", "FUSE_MAX", "FUSE_MED", "FUSE_MIN",
    "FUSE_MIXED", "FUSE_MNZ", "FUSE_RBC", "FUSE_RRF", "FUSE_SUM", "FUSE_TIES_QUICKSORT", "FUSE_TIES_RANKED",
    "FUSE_TIES_STABLE", "FUSE_WMNZ", "FUSE_WSUM", "FUSE_W_BORDA", "FUSE_W_CONDORCET", "F_SET", "GAIN_EXP",
    "GAIN_LINEAR", "GAIN_MAP", "GRADED", "G_GAIN", "HIT", "IDCG", "INFAP", "IPREC", "IPREC_V9", "JUDGED", "MEASURES",
    "NDCG", "NDCG_REL", "NONREL_JUDGED", "NORM_BORDA", "NORM_MAX", "NORM_MIN_MAX", "NORM_MIN_MAX_INVERTED",
    "NORM_NONE", "NORM_RANK", "NORM_SUM", "NORM_ZMUV", "NUM_REL", "NUM_REL_RET", "NUM_RET", "ORDER_BEST",
    "ORDER_INPUT", "ORDER_ITEM_ASC",
    "ORDER_ITEM_DESC", "ORDER_QUICKSORT", "ORDER_QUICKSORT_REVERSED", "ORDER_QUICKSORT_TWICE", "ORDER_WORST", "P",
    "PT11", "PT11_V9", "P_DEPTH", "RBP", "RBP_GAIN", "RBP_RESID", "RBP_TREC", "RECALL", "REL_P", "RNDCG", "RPREC",
    "RPREC_MULT", "RR", "SET_MAP", "TIES_AVERAGE", "TIES_NONE", "TIES_SHARED_RANK", "TM_AP", "TM_P", "TM_RECALL",
    "TM_RR", "UNJ", "UTILITY",
]

# measures
DCG, IDCG, NDCG, AP, RR, P, RECALL, HIT, ERR, RPREC, NUM_RET, NUM_REL_RET, NUM_REL = range(13)
# AP over min(R, depth) (XGBoost, LightGBM, CatBoost); precision over min(k, n) (XGBoost, CatBoost)
AP_MIN, P_DEPTH = 13, 14
# judgment-based (bpref: unjudged and negative labels skipped / negative labels judged non-relevant, ranx;
# infAP; the share of judged items in the top k)
BPREF, BPREF_NEG, INFAP, JUDGED = 15, 16, 17, 18
# rank-biased precision with persistence p (binary at the relevance level / graded by the label's gain /
# trec_eval 10's: the label, divided by the query's largest judged label when that is above 1)
RBP, RBP_GAIN, RBP_TREC = 19, 20, 27
# F measure with trec_eval's parameter x: (x + 1) P R / (x P + R), at a cutoff or over the whole list
F_SET = 21
# interpolated precision at a recall level, and its mean over the 11 levels 0.0, 0.1, ... 1.0; the level's
# number of relevant items rounded as trec_eval 10 (lround) or as trec_eval 9 (+0.9, truncated)
IPREC, IPREC_V9, PT11, PT11_V9 = 22, 23, 24, 25
# area under the ROC curve of the (top k) items: relevant above non-relevant, tied pairs counting 1/2
AUC = 26
# trec_eval's gain measures G, ndcg_rel and Rndcg (graded, rows in order); its set and cutoff measures
# Rprec_mult, utility, relative_P / set_relative_P, set_map, num_nonrel_judged_ret, unj, rbp_resid, binG
G_GAIN, NDCG_REL, RNDCG = 28, 29, 30
RPREC_MULT, UTILITY, REL_P, SET_MAP, NONREL_JUDGED, UNJ, RBP_RESID, BING = range(31, 39)
# torchmetrics' retrieval measures (their `preds > 0`: a relevant item scored 0 or less is no hit): average precision
# over the hits in the top k, reciprocal rank, precision at k, recall at k
TM_AP, TM_RR, TM_P, TM_RECALL = range(39, 43)
#: The measure codes the kernels compute (:mod:`ranklens._kernels.values`): the graded ones (gains of the labels;
#: trec_eval's G, ndcg_rel and Rndcg are consecutive) and those of a relevance level. The measure registry uses
#: exactly these (tests/test_registry.py); any other code is refused before a kernel runs.
GRADED = (DCG, IDCG, NDCG, ERR, G_GAIN, NDCG_REL, RNDCG)
BINARY = (AP, RR, P, RECALL, HIT, RPREC, NUM_RET, NUM_REL_RET, NUM_REL, AP_MIN, P_DEPTH, BPREF, BPREF_NEG, INFAP,
          JUDGED, RBP, RBP_GAIN, RBP_TREC, F_SET, IPREC, IPREC_V9, PT11, PT11_V9, AUC, RPREC_MULT, UTILITY, REL_P,
          SET_MAP, NONREL_JUDGED, UNJ, RBP_RESID, BING, TM_AP, TM_RR, TM_P, TM_RECALL)
MEASURES = GRADED + BINARY
# tied scores: in the given order, averaged over the orders of each tie group, or one shared rank
TIES_NONE, TIES_AVERAGE, TIES_SHARED_RANK = 0, 1, 2
# how a query's rows are put in ranked order
ORDER_INPUT, ORDER_QUICKSORT, ORDER_WORST, ORDER_BEST, ORDER_ITEM_DESC, ORDER_ITEM_ASC = range(6)
# ranx.evaluate given plain dicts: numba's quicksort of the scores ascending, reversed
ORDER_QUICKSORT_REVERSED = 6
# ranx.evaluate(..., make_comparable=True): the Run's quicksort of the negated scores, then make_comparable's again
ORDER_QUICKSORT_TWICE = 7
# gain of a label
GAIN_LINEAR, GAIN_EXP, GAIN_MAP = range(3)
# rank fusion (kernels/fusion.py): ranx's unsupervised methods, its normalisations, and how a run's ties are ordered
# (numba's quicksort as a ranx.Run built from a dict / already in a ranx.Run's order / stable)
(FUSE_SUM, FUSE_MNZ, FUSE_MAX, FUSE_MIN, FUSE_MED, FUSE_ANZ, FUSE_GMNZ, FUSE_WSUM, FUSE_WMNZ, FUSE_MIXED, FUSE_RRF,
 FUSE_ISR, FUSE_LOG_ISR, FUSE_LOGN_ISR, FUSE_RBC, FUSE_BORDA, FUSE_W_BORDA, FUSE_CONDORCET,
 FUSE_W_CONDORCET) = range(19)
NORM_NONE, NORM_MIN_MAX, NORM_MIN_MAX_INVERTED, NORM_MAX, NORM_SUM, NORM_ZMUV, NORM_RANK, NORM_BORDA = range(8)
FUSE_TIES_QUICKSORT, FUSE_TIES_RANKED, FUSE_TIES_STABLE = range(3)
