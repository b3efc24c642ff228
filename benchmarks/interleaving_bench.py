"""Interleaving at scale and its power against an A/B test (issue #30, point 8).

1. ``online.interleaving_outcome`` on a 10,000,000-row click log (1,000,000 impressions x 10 positions), per
   method and table form, beside the same team-draft outcome computed by a pandas group-by (the values are
   checked equal). Median of three runs, in this process, after one warm-up run.
2. The impressions each design needs for 80% power at alpha = 0.05 (two-sided) on the same ranker pair of the
   simulator (``online.simulate``: graded judgments, users with heterogeneity and several sessions each, a
   position-based click model). A/B: the delta-method standard error of ``online.ab_test`` on 20,000 users
   scaled to the users that make the true difference (``Simulation.truth``, exact) 2.80 standard errors
   away, times the sessions per user. Interleaving: the same users' sessions shown the team-draft (or
   balanced, probabilistic) interleaving of the two arms' lists (``online.simulate_interleaving``); the
   variance of the per-impression outcome with impressions clustered by user (the delta method over users),
   scaled likewise. The interleaving requirement is then checked by simulation: independent blocks of users
   of that size, the share whose sign test rejects.

``--append FILE`` adds the section to the benchmark report.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

import report_section

N_IMPRESSIONS, K = 1_000_000, 10
PAIRS = ({"control": 1.0, "treatment": 0.8}, {"control": 1.0, "treatment": 0.9})
AB_MEASURES = ("clicks@10", "ctr@10", "first_click_rr", "abandonment", "ndcg@10")


def _log(seed: int = 0) -> dict[str, np.ndarray]:
    """A synthetic log with every method's columns: positions 1..10, a team per row, 8% clicks."""
    rng = np.random.default_rng(seed)
    n = N_IMPRESSIONS * K
    team = (rng.random(n) < 0.5).astype(np.int64)
    rank_a = np.tile(np.arange(1, K + 1), N_IMPRESSIONS).astype(np.float64)
    rank_b = np.tile(np.roll(np.arange(1, K + 1), 1), N_IMPRESSIONS).astype(np.float64)
    prob = rng.random((2, n)) * 0.5 + 0.01
    return {"impression": np.repeat(np.arange(N_IMPRESSIONS, dtype=np.int64), K),
            "position": np.tile(np.arange(1, K + 1, dtype=np.int64), N_IMPRESSIONS), "team": team,
            "click": (rng.random(n) < 0.08).astype(np.int8), "rank_a": rank_a, "rank_b": rank_b,
            "prob_a": prob[0], "prob_b": prob[1]}


def _median(fn, reps: int = 3) -> tuple[float, object]:
    out = fn()  # warm-up: imports, first allocations
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def _pandas_team_draft(df):
    credit = df[df["click"] == 1].groupby(["impression", "team"], observed=True).size().unstack(fill_value=0)
    diff = credit.get("a", 0) - credit.get("b", 0)
    return int((diff > 0).sum()), int((diff < 0).sum())


def speed() -> list[dict]:
    import pandas as pd
    import pyarrow as pa

    from ranklens import online

    base = _log()
    labels = np.where(base["team"] == 0, "a", "b")
    cases = [
        ("team_draft", "dict of numpy columns, integer teams", dict(base), {"teams": (0, 1)}),
        ("team_draft", "pyarrow table, string teams", pa.table(dict(base, team=pa.array(labels))), {}),
        ("team_draft", "pandas, categorical teams", pd.DataFrame(dict(base, team=pd.Categorical(labels))), {}),
        ("team_draft", "pandas, string (object) teams", pd.DataFrame(dict(base, team=labels.astype(object))), {}),
        ("balanced", "dict of numpy columns", dict(base), {}),
        ("probabilistic", "dict of numpy columns", dict(base), {}),
    ]
    rows = []
    for method, form, table, kw in cases:
        t, res = _median(lambda table=table, kw=kw, method=method: online.interleaving_outcome(
            table, method=method, **kw))
        rows.append({"what": f"interleaving_outcome, {method}, {form}", "seconds": t, "wins": res.wins,
                     "losses": res.losses})
    df = pd.DataFrame(dict(base, team=labels))
    t, (w, ls) = _median(lambda: _pandas_team_draft(df))
    assert (w, ls) == (rows[1]["wins"], rows[1]["losses"]), ((w, ls), rows[1])
    rows.append({"what": "pandas group-by: team-draft wins and losses only (no test, no interval, no validation)",
                 "seconds": t, "wins": w, "losses": ls})
    return rows


def _clustered_n(outcome: np.ndarray, user: np.ndarray, z: float) -> tuple[float, float]:
    """(mean outcome, impressions for the power ``z``): the delta method over users of the mean outcome."""
    n = outcome.shape[0]
    theta = float(outcome.mean())
    s = np.bincount(user, weights=outcome)
    m = np.bincount(user).astype(np.float64)
    var_per_impression = n * float(((s - theta * m) ** 2).sum()) / n ** 2
    return theta, z * z * var_per_impression / theta ** 2


def power(pair: dict, n_users: int = 20_000, seed: int = 0) -> dict:
    from scipy.special import ndtri

    from ranklens import online
    from ranklens.online.interleaving_stats import sign_test

    za, zb = float(ndtri(0.975)), float(ndtri(0.8))
    sim = online.simulate(pair, n_users=n_users, seed=seed)
    per_user = len(sim.sessions["user"]) / n_users
    truth = sim.truth(list(AB_MEASURES))
    ab = online.ab_test(sim.events, list(AB_MEASURES))
    out: dict = {"pair": pair, "sessions_per_user": per_user, "ab": {}, "il": {}}
    for m in AB_MEASURES:
        r = ab.row(m, "treatment")
        d = truth.difference(m, "treatment")
        users = n_users * ((za + zb) * r["se"] / d) ** 2
        out["ab"][m] = {"difference": d, "impressions": users * per_user}
    big = online.simulate(pair, n_users=200_000, seed=seed)  # the same seed: the same judgments and lists
    assert np.array_equal(big.served.items, sim.served.items)
    for method in ("team_draft", "balanced", "probabilistic"):
        s = big if method != "probabilistic" else online.simulate(pair, n_users=40_000, seed=seed)
        log = online.simulate_interleaving(s, method=method, seed=seed + 2)
        res = online.interleaving_outcome(log, method=method, teams=("treatment", "control"))
        o = res.per_impression["outcome"].astype(np.float64)
        user = s.sessions["user"][res.per_impression["impression"]]
        theta, n_req = _clustered_n(o, user, za + zb)
        row = {"delta": theta / 2, "impressions": n_req}
        if method == "team_draft":  # the check: blocks of users with n_req impressions, sign test at 0.05
            users_per_block = int(np.ceil(n_req / (len(o) / s.users["arm"].shape[0])))
            block = user // users_per_block
            full = block < block.max()
            wins = np.bincount(block[full], weights=(o[full] > 0))
            losses = np.bincount(block[full], weights=(o[full] < 0))
            row["check_blocks"] = int(wins.shape[0])
            row["check_power"] = float(np.mean(sign_test(wins, losses) < 0.05))
        out["il"][method] = row
    return out


def section(speed_rows: list[dict], powers: list[dict]) -> list[str]:
    load = os.getloadavg()[0]
    lines = ["", f"## Interleaving: {N_IMPRESSIONS * K:,}-row click log, and power against A/B", "",
             f"`online.interleaving_outcome` on {N_IMPRESSIONS:,} impressions x {K} positions (median of 3 runs, one "
             f"process, load average {load:.1f} on {os.cpu_count()} cores at the end):", "",
             "| what | seconds |", "|---|---:|"]
    lines += [f"| {r['what']} | {r['seconds']:.2f} |" for r in speed_rows]
    lines += ["", "Impressions needed for 80% power at alpha = 0.05 on the same ranker pair of the simulator "
              "(scores = grade + noise: control noise 1.0; A/B on users with the delta method; interleaving's "
              "outcome clustered by user). Ratio = A/B's impressions / team draft's:", "",
              "| ranker pair | A/B measure | true difference | A/B impressions | team draft impressions | ratio |",
              "|---|---|---:|---:|---:|---:|"]
    for p in powers:
        name = f"control 1.0 vs treatment {p['pair']['treatment']}"
        td = p["il"]["team_draft"]["impressions"]
        for m, r in p["ab"].items():
            lines.append(f"| {name} | {m} | {r['difference']:+.4f} | {r['impressions']:,.0f} | {td:,.0f} | "
                         f"{r['impressions'] / td:.1f} |")
    lines += ["", "| ranker pair | method | delta | impressions for 80% power | power check (blocks) |",
              "|---|---|---:|---:|---:|"]
    for p in powers:
        for method, r in p["il"].items():
            check = f"{r['check_power']:.2f} ({r['check_blocks']})" if "check_power" in r else ""
            lines.append(f"| control 1.0 vs treatment {p['pair']['treatment']} | {method} | {r['delta']:+.4f} | "
                         f"{r['impressions']:,.0f} | {check} |")
    lines += ["", "The power check draws blocks of users (each with about the computed number of impressions) "
              "from a 200,000-user simulation and counts the blocks whose sign test rejects at 0.05: about 0.80 "
              "when the computed requirement is right."]
    return lines


def main() -> None:
    report_section.run(lambda: section(speed(), [power(p) for p in PAIRS]))


if __name__ == "__main__":
    main()
