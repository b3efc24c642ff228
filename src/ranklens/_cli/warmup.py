"""Compile (and cache) the JIT kernels beforehand: ``ranklens warmup`` (``python -m ranklens._cli.warmup``).

Work of every size runs on the kernels compiled ahead of time when the package was built, when they
are there: then nothing needs compiling and this says so. Where they could not be built (ranklens
built from its sources without a C compiler), every kernel runs on numba's parallel JIT, which
compiles a kernel the first time it meets a new combination of argument types and caches the machine
code on disk; this runs the usual combinations (TREC files, dicts, integer and string ids, Arrow
tables, every tie rule, the resampling of ``compare``) on tiny data with the JIT forced, so that no
later call pays for compilation. ``force=True`` (``ranklens warmup --jit``) does it even when the
ahead-of-time kernels are there, for ``RANKLENS_KERNELS=jit``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import click
import numpy as np

__all__ = ["main", "warmup", "warmup_cmd"]


def warmup(force: bool = False) -> str:
    """Compile and cache the JIT kernels unless the ahead-of-time kernels make them unused.

    Parameters
    ----------
    force : bool
        Compile them even when the ahead-of-time kernels are installed.

    Returns
    -------
    str
        One line saying what was done.
    """
    from ranklens._kernels import api

    status = api.aot_status()
    if status == "ok" and not force:
        return "ranklens: the kernels compiled ahead of time are installed; nothing to compile"
    why = "asked for" if status == "ok" else f"the ahead-of-time kernels are {status.split(' (')[0]}"
    print(f"ranklens: compiling the JIT kernels ({why}); this takes a minute or two, once", file=sys.stderr,
          flush=True)
    with api.quiet(), api.forced("jit"):  # this says what it does itself
        return _run()


@click.command("warmup")
@click.option("--jit", "force", is_flag=True,
              help="Compile the JIT kernels even when the ahead-of-time ones are installed (for RANKLENS_KERNELS=jit).")
def warmup_cmd(force: bool) -> None:
    """Compile the kernels now, if this installation needs it (it did not get the ahead-of-time ones)."""
    click.echo(warmup(force=force))


def main() -> None:
    print(warmup(force=True))


def _run() -> str:
    import ranklens

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        q = os.path.join(d, "qrels.txt")
        r = os.path.join(d, "run.txt")
        with open(q, "w") as f:
            f.write("1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 a 1\n")
        with open(r, "w") as f:
            f.write("1 Q0 a 1 3.0 s\n1 Q0 b 2 2.0 s\n1 Q0 c 3 2.0 s\n2 Q0 b 1 1.0 s\n")
        qb = os.path.join(d, "qrels-binary.txt")  # XGBoost's map and pre take binary labels only
        with open(qb, "w") as f:
            f.write("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 a 1\n")
        measures = ["ndcg@10", "ndcg", "map", "map@10", "mrr@10", "P@10", "recall@100", "err@10", "r_precision",
                    "hits@10"]
        for conv in ("ranklens", "trec_eval", "ir_measures", "lightgbm", "ranx", "catboost", "xgboost"):
            for m in measures:  # each preset computes the measures its peer has and refuses the others
                try:
                    ranklens.evaluate(qb if conv == "xgboost" else q, r, [m], convention=conv, empty=0)
                except (ranklens.InputError, ranklens.InvalidParameterError):
                    pass
        ranklens.explain(q, r, "1", k=3, compare="lightgbm")
    labels = np.array([[3, 0, 1, 0], [0, 1, 2, 0]])
    scores = np.array([[0.1, 0.4, 0.4, 0.2], [0.3, 0.2, 0.1, 0.0]])
    ranklens.evaluate(labels, scores, ["ndcg@3", "map"])
    ranklens.ndcg_score(labels, scores, k=3)
    ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": 0.7}}, ["ndcg"])
    try:
        import pyarrow as pa

        t = pa.table({"query": ["x", "x", "y"], "item": ["a", "b", "a"], "score": [1.0, 2.0, 1.0],
                      "relevance": [1, 0, 1]})
        ranklens.evaluate(t, None, ["ndcg@10", "map"])
        # the monitoring store's shape: integer list ids, integer item positions, float gains
        m = pa.table({"query": np.array([1, 1, 2], dtype=np.int64), "item": np.arange(3, dtype=np.int64),
                      "score": np.array([-1.0, -2.0, -1.0]), "label": np.array([1.0, 0.0, 2.0])})
        ranklens.evaluate(m, None, ["ndcg@1", "ndcg@5", "ndcg@10", "mrr@10", "map@10"],
                          query_col="query", item_col="item", score_col="score", label_col="label")
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pass
    try:  # resampling kernels of compare, stats and the monitoring reports (scipy: the stats extra)
        a, b = np.array([0.1, 0.5, 0.9, 0.4]), np.array([0.2, 0.4, 0.7, 0.1])
        ranklens.stats.bootstrap_ci(a, n_resamples=20)
        ranklens.stats.randomization(a, b, n_resamples=20)
        ranklens.stats.paired_bootstrap(a, b, n_resamples=20)
    except ImportError:  # pragma: no cover - without scipy
        pass
    return f"ranklens: kernels compiled and cached in {time.perf_counter() - t0:.1f} s"


if __name__ == "__main__":
    main()
