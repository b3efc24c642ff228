"""Notebook and tracker helpers: HTML reprs, data frames of results and comparisons, flat metric names."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ranklens
from ranklens.errors import InvalidParameterError
from ranklens.measures import flat_name

# hand-made: q1 relevant item at rank 2 (RR 1/2), q2 at rank 1 (RR 1), q<3> has no relevant item
QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}, "q<3>": {"e": 0}}
RUN = {"q1": {"a": 0.1, "b": 0.9}, "q2": {"c": 0.8, "d": 0.2}, "q<3>": {"e": 1.0}}
BETTER = {"q1": {"a": 0.9, "b": 0.1}, "q2": {"c": 0.8, "d": 0.2}, "q<3>": {"e": 1.0}}


def test_result_html_states_values_convention_and_exclusions():
    res = ranklens.evaluate(QRELS, RUN, ["mrr", "P@1"], convention="ranklens")
    html = res._repr_html_()
    assert html.startswith('<div class="ranklens">') and html.count("<table") == 1
    assert ">mrr</td>" in html and ">0.7500</td>" in html  # (1/2 + 1) / 2
    assert ">P@1</td>" in html and ">0.5000</td>" in html
    assert "convention &#x27;ranklens&#x27;" in html and "ties averaged" in html  # the convention, described
    assert "no relevant item: skipped" in html and "q&lt;3&gt;" in html  # the exclusion, escaped
    assert "<3>" not in html


def test_comparison_and_explanation_html():
    c = ranklens.compare(QRELS, {"base": RUN, "better": BETTER}, ["mrr", "ndcg"], n_resamples=99)
    html = c._repr_html_()
    assert html.count("<table") == 2 and "mrr  (baseline: base)" in html and "ndcg  (baseline: base)" in html
    assert ">(baseline)</td>" in html and ">+0.2500</td>" in html  # mrr: 1 vs 0.75
    assert "paired randomization" in html and "Holm" in html
    e = ranklens.explain(QRELS, RUN, "q1", convention="trec_eval")
    html = e._repr_html_()
    assert "query q1 - ndcg under convention &#x27;trec_eval&#x27;" in html
    assert ">ideal item</th>" in html and ">0.63093</td>" in html  # 1/log2(3), the DCG of item a at rank 2


def test_result_frames_aggregate_and_per_query():
    res = ranklens.evaluate(QRELS, RUN, ["mrr", "P@1"])
    agg = res.to_pandas("aggregate")
    assert list(agg.index) == ["mrr", "P@1"] and agg.loc["mrr", "value"] == 0.75 and agg.loc["mrr", "queries"] == 2
    per = res.to_pandas()
    assert per.loc["q1", "mrr"] == 0.5 and per.loc["q2", "mrr"] == 1.0 and math.isnan(per.loc["q<3>", "mrr"])
    pl = res.to_polars("aggregate")
    assert pl.columns == ["measure", "value", "queries"] and pl["value"].to_list() == [0.75, 0.5]
    assert res.to_polars()["mrr"].to_list() == [0.5, 1.0, None]
    with pytest.raises(InvalidParameterError, match="kind"):
        res.to_pandas("summary")
    with pytest.raises(InvalidParameterError, match="per_query=False"):
        ranklens.evaluate(QRELS, RUN, ["mrr"], per_query=False).to_pandas()


def test_comparison_frames():
    c = ranklens.compare(QRELS, {"base": RUN, "better": BETTER}, ["mrr"], n_resamples=99)
    summary = c.to_pandas()
    row = summary.set_index("run").loc["better"]
    assert row["mean"] == 1.0 and row["diff"] == 0.25 and row["wins"] == 1 and row["ties"] == 1
    long = c.to_polars("per_query")
    assert long.columns == ["query", "measure", "run", "value"]
    got = {(q, r): v for q, r, v in zip(long["query"], long["run"], long["value"])}
    assert got[("q1", "base")] == 0.5 and got[("q1", "better")] == 1.0 and got[("q<3>", "base")] is None
    assert len(c.to_pandas("per_query")) == 3 * 2


def test_flat_names_are_accepted_by_mlflow_and_the_raw_keys_are_not():
    validation = pytest.importorskip("mlflow.utils.validation")
    keys = ["ndcg@10", "ndcg@10-", "map", "P.10", "recall@100(rel=2)", "mrr@10", "err@20", "ndcg_cut.10", "P@5"]
    for key in keys:
        validation._validate_metric_name(flat_name(key))  # MLflow's own check: raises on a bad name
    with pytest.raises(Exception, match="ndcg@10"):
        validation._validate_metric_name("ndcg@10")  # why the flat style exists
    res = ranklens.evaluate(QRELS, RUN, ["ndcg@10", "recall@100(rel=2)", "P.1"])
    flat = res.to_dict(style="flat", prefix="valid/")
    assert flat == {"valid/ndcg_at_10": res["ndcg@10"], "valid/recall_at_100_rel_2": res["recall@100(rel=2)"],
                    "valid/P.1": res["P.1"]}
    for name in flat:
        validation._validate_metric_name(name)


def test_flat_names_tensorboard_and_wandb_rule():
    # TensorBoard's summary tags and W&B keys: letters, digits, '_', '-', '.', '/' are safe everywhere
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")
    for key in ["ndcg@10", "recall@100(rel=2)", "ndcg@3-", "hit_rate@5", "map(rel=2)"]:
        assert set(flat_name(key)) <= allowed
    with pytest.raises(InvalidParameterError, match="style"):
        ranklens.evaluate(QRELS, RUN, ["mrr"]).to_dict(style="wide")


def test_regressions_lists_significantly_worse_runs():
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(10)}
    good = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(10)}
    bad = {f"q{i}": {"a": 1.0, "b": 2.0} for i in range(10)}
    c = ranklens.compare(qrels, {"good": good, "bad": bad, "same": good}, ["mrr"], n_resamples=999)
    assert [(r["run"], r["diff"]) for r in c.regressions()] == [("bad", -0.5)]  # RR 1/2 against 1 on every query
    assert np.isclose(c.row("bad", "mrr")["mean"], 0.5)


def test_plots_draw_on_given_axes_and_return_the_figure():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from ranklens.plot import cutoff_curves, plot_curves, plot_differences, plot_forest

    c = ranklens.compare(QRELS, {"base": RUN, "better": BETTER}, ["mrr", "ndcg@2"], n_resamples=99)
    fig = Figure()
    ax1, ax2, ax3 = fig.subplots(1, 3)
    assert plot_differences(c, "mrr", ax=ax1) is fig
    heights = sorted(p.get_height() for p in ax1.patches)
    assert heights == [0.0, 0.5]  # q1: RR 1 - 1/2; q2: equal (q<3> counted by neither)
    assert plot_forest(c, "ndcg@2", ax=ax2) is fig
    curves = cutoff_curves(QRELS, {"base": RUN, "better": BETTER}, ["ndcg@2"], ks=[1, 2])
    assert plot_curves(curves, ax=ax3) is fig
    base_line = [line for line in ax3.get_lines() if line.get_label() == "base"][0]
    # q1: relevant a at rank 2 (NDCG@1 0, NDCG@2 1/log2(3)); q2 at rank 1 (1); q<3> skipped
    assert list(base_line.get_ydata()) == pytest.approx([0.5, (1 / math.log2(3) + 1) / 2])
    own = plot_forest(c)  # no axes given: a new figure
    assert isinstance(own, Figure) and own is not fig
    with pytest.raises(InvalidParameterError, match="not in the comparison"):
        plot_forest(c, "map")


def test_flat_dict_logs_to_mlflow_and_the_aggregate_does_not(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri("file:" + str(tmp_path / "mlruns"))
    res = ranklens.evaluate(QRELS, RUN, ["ndcg@2", "mrr", "recall@2(rel=1)"])
    with mlflow.start_run() as run:
        with pytest.raises(Exception, match="Names may only contain"):
            mlflow.log_metrics(res.aggregate)  # the failure of the issue
        mlflow.log_metrics(res.to_dict(style="flat"))
    logged = mlflow.get_run(run.info.run_id).data.metrics
    # q1: relevant a at rank 2, q2 at rank 1 (q<3> skipped): NDCG@2 (1/log2(3) + 1) / 2, MRR 3/4, recall 1
    assert logged == pytest.approx({"ndcg_at_2": (1 / math.log2(3) + 1) / 2, "mrr": 0.75, "recall_at_2_rel_1": 1.0})
