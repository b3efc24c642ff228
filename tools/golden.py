"""A snapshot of ranklens' numbers, to show that a refactoring changed none of them (a developer's tool).

    python tools/golden.py write SNAPSHOT.json      # compute every number below and write them
    python tools/golden.py compare OLD.json NEW.json

What it computes, through the public API and the command line only (so it runs on any layout of the package):
every measure family of the registry under every convention (with and without a cutoff) on TREC DL 2019 and on
random tie-heavy data, the per-query values and the aggregates; ``compare`` of two runs; the paired tests and
intervals of ``ranklens.stats``; the scikit-learn drop-ins; the LightGBM and XGBoost metrics; ``explain``;
``ranklens trec_eval -q -m all_trec``; and a monitoring store built from simulated events (report, slices,
signals, check). Floats are kept as ``float.hex`` so "equal" means bit for bit.

``compare`` reports numbers that differ (a failure: exit 1), and, apart from that, keys present on one side only
and texts that changed (error messages, layouts: to be read, not a failure). It is not a test and its snapshot
is not an expectation of the test suite: it compares ranklens with itself, before and after a change.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data"
QRELS = DATA / "qrels.dl19-passage.txt"
RUNS = [DATA / "run.bm25.dl19.txt", DATA / "run.splade.dl19.txt"]


def _num(x: Any) -> Any:
    """Floats (and numpy scalars) as hex, containers recursively, the rest as is."""
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(x, str):
        return x.item() if isinstance(x, np.bool_) else x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x).hex() if math.isfinite(x) else repr(float(x))
    if isinstance(x, dict):
        return {str(k): _num(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_num(v) for v in x]
    return repr(x)


TMP = ""  # the temporary directory, written <tmp> in the snapshot


def _safe(fn: Any) -> Any:
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return _num(fn())
    except Exception as exc:  # a refusal is part of the snapshot
        return f"error: {type(exc).__name__}: {exc}".replace(TMP, "<tmp>")


def _random_trec(tmp: Path, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(60):
        n = int(rng.integers(1, 40))
        grades = [-1, 0, 0, 1, 2, 3] if q % 7 == 3 and seed == 1 else [0, 0, 0, 1, 2, 3]  # -1: infAP's unsampled
        labels = rng.choice(grades, size=n)
        if q % 11 == 5:
            labels[:] = 0
        scores = np.round(rng.normal(size=n), 1)  # many ties
        for i in range(n):
            if q % 13 != 4 or i % 2 == 0:  # some ranked items unjudged
                qrels.append(f"q{q} 0 d{i} {labels[i]}")
            if q % 17 != 6 or seed != 1:  # some judged queries not ranked (in the first data set)
                run.append(f"q{q} Q0 d{i} {i + 1} {scores[i]} r")
        if q % 5 == 0:
            qrels.append(f"q{q} 0 extra{q} 2")  # a relevant item never ranked
    qp, rp = tmp / f"qrels{seed}.txt", tmp / f"run{seed}.txt"
    qp.write_text("\n".join(qrels) + "\n")
    rp.write_text("\n".join(run) + "\n")
    return qp, rp


def _measures() -> list[str]:
    from ranklens.measures import REGISTRY

    out = []
    for family, spec in REGISTRY.items():
        out.append(family)
        if spec.cutoff:
            out += [f"{family}@5", f"{family}@20"]
    return out


def offline(tmp: Path) -> dict[str, Any]:
    import ranklens

    snap: dict[str, Any] = {}
    pairs = [("dl19", QRELS, RUNS[1])] + [(f"random{s}", *_random_trec(tmp, s)) for s in (1, 2)]
    for name, qrels, run in pairs:
        for conv in sorted(ranklens.CONVENTIONS):
            for m in _measures():
                def one(qrels: Path = qrels, run: Path = run, conv: str = conv, m: str = m) -> Any:
                    res = ranklens.evaluate(str(qrels), str(run), [m], convention=conv)
                    return res.to_dict(per_query=True)
                snap[f"evaluate/{name}/{conv}/{m}"] = _safe(one)
    return snap


def comparisons() -> dict[str, Any]:
    import ranklens
    from ranklens import stats

    snap: dict[str, Any] = {}
    snap["compare/dl19"] = _safe(lambda: ranklens.compare(str(QRELS), [str(r) for r in RUNS],
                                                          ["ndcg@10", "map", "P@10"]).to_dict())
    rng = np.random.default_rng(7)
    a, b = rng.random(50), rng.random(50) * 0.9 + 0.05
    b[::5] = a[::5]
    for name, fn in {
        "paired_t": lambda: stats.paired_t(a, b), "wilcoxon": lambda: stats.wilcoxon(a, b),
        "randomization": lambda: stats.randomization(a, b, 2000, 3),
        "paired_bootstrap": lambda: stats.paired_bootstrap(a, b, 2000, 3),
        "t_interval": lambda: stats.t_interval(a), "effect_size": lambda: stats.effect_size(a, b),
        "bootstrap_ci": lambda: stats.bootstrap_ci(a, n_resamples=2000, seed=1),
        "correct": lambda: stats.correct([0.01, 0.04, 0.03, 0.2], "holm"),
        "correct_bh": lambda: stats.correct([0.01, 0.04, 0.03, 0.2], "bh"),
    }.items():
        snap[f"stats/{name}"] = _safe(lambda fn=fn: vars(fn()) if hasattr(fn(), "__dict__") else fn())
    return snap


def dropins() -> dict[str, Any]:
    import ranklens
    import ranklens.lightgbm

    snap: dict[str, Any] = {}
    rng = np.random.default_rng(11)
    yt = rng.integers(0, 4, size=(20, 15)).astype(float)
    ys = np.round(rng.normal(size=(20, 15)), 1)
    for k in (None, 1, 5, 15):
        for ties in (False, True):
            for name, fn in (("ndcg", ranklens.ndcg_score), ("dcg", ranklens.dcg_score)):
                snap[f"sklearn/{name}/{k}/{ties}"] = _safe(lambda f=fn, k=k, t=ties: f(yt, ys, k=k, ignore_ties=t))
    labels = rng.integers(0, 5, size=3000).astype(float)
    preds = rng.normal(size=3000)
    group = np.full(100, 30)
    for conv in ("lightgbm", "ranklens", "trec_eval"):
        metric = ranklens.lightgbm.feval(["ndcg@10", "map@5", "ndcg"], convention=conv)
        snap[f"lightgbm/{conv}"] = _safe(lambda m=metric: m(labels, preds, None, group))
    try:
        import xgboost

        import ranklens.xgboost
        dm = xgboost.DMatrix(rng.normal(size=(3000, 3)), label=labels)
        dm.set_group(group)
        for conv in ("xgboost", "ranklens"):
            metric = ranklens.xgboost.custom_metric(["ndcg@10", "map@5", "ndcg@10-"], convention=conv)
            snap[f"xgboost/{conv}"] = _safe(lambda m=metric: m(preds, dm))
    except ImportError:
        pass
    snap["explain/dl19"] = _safe(lambda: ranklens.explain(str(QRELS), str(RUNS[1]), "1037798", k=10,
                                                          compare="lightgbm").to_dict())
    return snap


def _cli(*args: str) -> Any:
    exe = str(Path(sys.executable).with_name("ranklens"))
    proc = subprocess.run([exe, *args], capture_output=True, text=True, cwd=ROOT)
    out: Any = proc.stdout.replace(TMP, "<tmp>")
    with contextlib.suppress(ValueError):
        out = _num(json.loads(out))
    return {"status": proc.returncode, "out": out}


def command_line(tmp: Path) -> dict[str, Any]:
    snap: dict[str, Any] = {}
    q1, r1 = _random_trec(tmp, 1)
    for name, q, r in [("dl19", QRELS, RUNS[0]), ("random1", q1, r1)]:
        snap[f"trec_eval/{name}"] = _cli("trec_eval", "-q", "-m", "all_trec", str(q), str(r))
        snap[f"eval/{name}"] = _cli("eval", str(q), str(r), "-m", "ndcg@10", "-m", "map", "-q", "-f", "json")
    return snap


def monitoring(tmp: Path) -> dict[str, Any]:
    events, store, cfg = tmp / "events", str(tmp / "store.duckdb"), str(ROOT / "examples" / "ranklens.toml")
    snap: dict[str, Any] = {}
    snap["monitor/simulate"] = _cli("monitor", "simulate", str(events), "--days", "10", "--groups-per-day", "400",
                                    "--decay-start", "2026-10-06", "--seed", "5")
    files = sorted(str(p) for p in events.glob("*.parquet"))
    snap["monitor/ingest"] = _cli("monitor", "ingest", *files, "--store", store, "--config", cfg, "-f", "json")
    common = ["--store", store, "--config", cfg]
    snap["monitor/report"] = _cli("monitor", "report", *common, "-m", "ndcg", "-k", "10", "--by", "country",
                                  "-f", "json")
    snap["monitor/report_map"] = _cli("monitor", "report", *common, "-m", "map", "-f", "json")
    snap["monitor/slices"] = _cli("monitor", "slices", *common, "-f", "json")
    snap["monitor/check"] = _cli("monitor", "check", *common, "--no-record", "-f", "json")
    snap["monitor/signals"] = _cli("monitor", "signals", *common, "-m", "psi(score)", "-m", "ks(score)", "-f", "json")
    return snap


def write(path: Path) -> None:
    global TMP
    # the snapshot calls the current spellings only (docs/glossary.md): an old one is an error here, recorded as such
    warnings.filterwarnings("error", message=r".*is deprecated, use", category=DeprecationWarning)
    with tempfile.TemporaryDirectory() as d:
        tmp, TMP = Path(d), d
        snap = {**offline(tmp), **comparisons(), **dropins(), **command_line(tmp), **monitoring(tmp)}
    path.write_text(json.dumps(snap, indent=1, sort_keys=True))
    errors = sum(1 for v in snap.values() if isinstance(v, str) and v.startswith("error:"))
    print(f"{len(snap)} entries ({errors} refusals or errors) -> {path}")


def _leaves(x: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(x, dict):
        out: dict[str, Any] = {}
        for k, v in x.items():
            out.update(_leaves(v, f"{prefix}/{k}"))
        return out
    if isinstance(x, list):
        out = {}
        for i, v in enumerate(x):
            out.update(_leaves(v, f"{prefix}[{i}]"))
        return out
    return {prefix: x}


def _is_number(v: Any) -> bool:
    return isinstance(v, int) or (isinstance(v, str) and (v.startswith(("0x", "-0x")) or v in ("nan", "inf", "-inf")))


def compare(old: Path, new: Path) -> int:
    a, b = _leaves(json.loads(old.read_text())), _leaves(json.loads(new.read_text()))
    numbers, texts = [], []
    for key in sorted(set(a) & set(b)):
        if a[key] != b[key]:
            (numbers if _is_number(a[key]) and _is_number(b[key]) else texts).append(key)
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    # numbers under renamed keys: the same multiset of numbers per top-level entry
    moved = []
    for top in sorted({k.split("/", 2)[1] for k in only_a + only_b}):
        na = sorted(str(v) for k, v in a.items() if k.startswith(f"/{top}/") and _is_number(v))
        nb = sorted(str(v) for k, v in b.items() if k.startswith(f"/{top}/") and _is_number(v))
        if na != nb:
            moved.append(top)
    for title, keys in (("NUMBERS DIFFER", numbers), ("numbers differ under renamed keys", moved),
                        ("texts differ", texts), (f"only in {old.name}", only_a), (f"only in {new.name}", only_b)):
        if keys:
            print(f"{title}: {len(keys)}")
            for k in keys[:25]:
                print(f"  {k}: {a.get(k, '-')!s:.120} | {b.get(k, '-')!s:.120}")
    print(f"{len(set(a) & set(b))} common leaves; {len(numbers)} numbers differ")
    return 1 if numbers or moved else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "write":
        write(Path(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
