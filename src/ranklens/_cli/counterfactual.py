"""``ranklens counterfactual``: fit | estimate | compare (click models, off-policy estimates from a click log)."""

from __future__ import annotations

import json
from typing import Any

import click

from .main import format_option, integer, number

__all__ = ["counterfactual"]

_LOG_OPTS = [
    click.option("--session-col", default=None, help="Session (served list) column (default: group_id, session...)."),
    click.option("--query-col", default=None, help="Query column (default: query, query_id, qid)."),
    click.option("--item-col", default=None, help="Item column (default: item_id, item, doc_id...)."),
    click.option("--rank-col", default=None, help="Rank column, 1 = top (default: rank, position)."),
    click.option("--click-col", default=None, help="Click column, 0/1 (default: click, or labels holding the label)."),
    click.option("--click-label", default="click", show_default=True, help="The label of a click in `labels`."),
]
_ESTIMATE_OPTS = [
    click.option("-m", "--measure", default="clicks@10", show_default=True,
                 help="clicks@k, ctr@k, or a measure of ranklens on debiased click gains: click_dcg@10, "
                      "click_ndcg@10..."),
    click.option("--click-model", default=None,
                 help="Click model fitted on the log for the position bias and dm / dr: pbm, cascade, dcm, dbn, sdbn "
                      "(default: pbm when needed)."),
    click.option("--examination", default=None, metavar="E1,E2,...",
                 help="Examination per rank (relative to rank 1) instead of the click model's, e.g. from a swap test."),
    click.option("--clip", type=number(min=1), default=None, help="Largest inverse propensity used."),
    click.option("--confidence", type=number(min=0, max=1), default=0.95, show_default=True,
                 help="Level of the intervals."),
    click.option("-c", "--convention", default="ranklens", show_default=True,
                 help="Convention of the core measures on click gains (click_ndcg@10...)."),
    click.option("--html", "html", default=None, type=click.Path(dir_okay=False),
                 help="Also write a self-contained HTML report (examination curve and estimates) to this file."),
]


def _opts(options: list[Any]) -> Any:
    def apply(f: Any) -> Any:
        for o in reversed(options):
            f = o(f)
        return f

    return apply


def _columns(kw: dict[str, Any]) -> dict[str, Any]:
    keys = ("session_col", "query_col", "item_col", "rank_col", "click_col", "click_label")
    return {k: kw.pop(k) for k in keys if k in kw}


def _examination(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, such as 1,0.6,0.4; got {text!r}",
                                 param_hint="--examination") from None


def _print(names: list[str], rows: list[dict[str, Any]], fmt: str, digits: int = 4) -> None:
    from .._output.render import render_rows

    click.echo(render_rows((names, rows), fmt, digits=digits))


def _json(obj: Any) -> None:
    from .._core.schema import plain

    click.echo(json.dumps(plain(obj), indent=1))


def _model_for(log: str, estimator: str, click_model: str | None, examination: list[float] | None,
               cols: dict[str, Any]) -> tuple[Any, Any]:
    """(the click model the estimator uses, fitted once here; what the report draws as the examination curve)."""
    from .. import counterfactual as cf

    model = None
    if examination is None or estimator in ("dm", "dr"):
        model = cf.fit_click_model(log, click_model or "pbm", **cols)
    if examination is not None:
        from types import SimpleNamespace

        return model, SimpleNamespace(examination=cf.ByRank(examination), kind="given")
    return model, model


@click.group("counterfactual")
def counterfactual() -> None:
    """Counterfactual evaluation from click logs: click models, position bias, off-policy estimates.

    \b
    ranklens counterfactual fit log.parquet --model pbm           examination per rank, perplexity
    ranklens counterfactual fit log.parquet --interventions swap --intervention-col partner
    ranklens counterfactual estimate log.parquet run.txt -e dr -m clicks@10
    ranklens counterfactual estimate slates.parquet -e rips      obp's layout, logged propensities
    ranklens counterfactual compare log.parquet a.txt b.txt --html report.html
    """


@counterfactual.command("fit")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("--model", default="pbm", show_default=True,
              type=click.Choice(["pbm", "cascade", "dcm", "dbn", "sdbn"]), help="The click model.")
@click.option("--interventions", default=None, type=click.Choice(["swap", "shuffle", "harvest"]),
              help="Estimate the examination from randomised traffic or across rankers instead of fitting a model.")
@click.option("--intervention-col", default=None, help="With --interventions swap: each session's partner rank.")
@click.option("--harvest", default="all_pairs", show_default=True,
              type=click.Choice(["all_pairs", "pivot", "adjacent"]), help="With --interventions harvest: the estimate.")
@click.option("--features", multiple=True,
              help="PBM: a numeric column describing the pair (regression EM); repeatable.")
@click.option("--iterations", type=integer(min=1), default=200, show_default=True, help="EM iterations at most.")
@click.option("--html", "html", default=None, type=click.Path(dir_okay=False),
              help="Also write a self-contained HTML report of the examination curve to this file.")
@format_option("rows")
@_opts(_LOG_OPTS)
def fit_cmd(log: str, model: str, interventions: str | None, intervention_col: str | None, harvest: str,
            features: tuple[str, ...], iterations: int, html: str | None, fmt: str, **kw: Any) -> None:
    """Fit a click model on LOG (or estimate the position bias from interventions): examination per rank."""
    from .. import counterfactual as cf

    cols = _columns(kw)
    fitted: Any
    if interventions is not None:
        fitted = cf.estimate_examination(log, interventions, intervention_col=intervention_col, harvest=harvest,
                                         **cols)
        rows = [{"rank": r, "examination": fitted.examination[r], "ci_low": fitted.ci_low[r],
                 "ci_high": fitted.ci_high[r], "support": int(fitted.support[r - 1])} for r in fitted.examination]
        summary: dict[str, Any] = fitted.to_dict()
    else:
        fitted = cf.fit_click_model(log, model, features=list(features) or None, iterations=iterations, **cols)
        rows = fitted.ranks().to_pylist()
        summary = fitted.to_dict()
    if html:
        from ..web.counterfactual_report import write_counterfactual_report

        write_counterfactual_report(html, model=fitted, title=f"Click model of {log}")
    if fmt == "json":
        _json({**summary, "ranks": rows})
        return
    if fmt == "table":
        what = summary.get("model") or summary.get("method")
        extra = (f" · log-likelihood {summary['log_likelihood']:.2f} · mean perplexity "
                 f"{summary['mean_perplexity']:.4f}") if "log_likelihood" in summary else ""
        click.echo(f"{what}: {summary['sessions']} sessions{extra}")
    _print(list(rows[0]), rows, fmt)


@counterfactual.command("estimate")
@click.argument("log", type=click.Path(dir_okay=False))
@click.argument("target", required=False, type=click.Path(dir_okay=False))
@click.option("-e", "--estimator", default="ips", show_default=True,
              type=click.Choice(["ips", "snips", "dm", "dr", "pi", "sips", "iips", "rips", "snsips", "sniips",
                                 "snrips", "cascade_dr"]),
              help="The estimator (the last seven read obp's layout with logged propensities; no TARGET).")
@click.option("--ci", type=click.Choice(["normal", "bootstrap"]), default="normal", show_default=True,
              help="Interval: the estimator's variance, or a bootstrap of sessions.")
@click.option("--resamples", type=integer(min=1), default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=integer(min=0), default=0, show_default=True, help="Seed of the bootstrap.")
@_opts(_ESTIMATE_OPTS)
@format_option("rows")
@_opts(_LOG_OPTS)
def estimate_cmd(log: str, target: str | None, estimator: str, ci: str, resamples: int, seed: int, measure: str,
                 click_model: str | None, examination: str | None, clip: float | None, confidence: float,
                 convention: str, html: str | None, fmt: str, **kw: Any) -> None:
    """Estimate TARGET's (a run) click measure from LOG, with its interval and diagnostics."""
    from .. import counterfactual as cf

    cols = _columns(kw)
    exam = _examination(examination)
    model = shown = None
    if estimator not in cf.SLATE_ESTIMATORS:
        model, shown = _model_for(log, estimator, click_model, exam, cols)
    else:
        cols = {}
    e = cf.estimate(log, target, estimator=estimator, measure=measure, click_model=model, examination=exam,
                    clip=clip, confidence=confidence, ci=ci, n_resamples=resamples, seed=seed, convention=convention,
                    **cols)
    row = {"run": target or "target policy", **e.to_dict()}
    if html:
        from ..web.counterfactual_report import write_counterfactual_report

        write_counterfactual_report(html, model=shown, rows=[row], title=f"Counterfactual estimate from {log}")
    if fmt == "json":
        _json(row)
        return
    _print(list(row), [row], fmt)


@counterfactual.command("compare")
@click.argument("log", type=click.Path(dir_okay=False))
@click.argument("targets", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-e", "--estimator", default="ips", show_default=True,
              type=click.Choice(["ips", "snips", "dm", "dr", "pi"]), help="The estimator.")
@_opts(_ESTIMATE_OPTS)
@format_option("rows")
@_opts(_LOG_OPTS)
def compare_cmd(log: str, targets: tuple[str, ...], estimator: str, measure: str, click_model: str | None,
                examination: str | None, clip: float | None, confidence: float, convention: str, html: str | None,
                fmt: str, **kw: Any) -> None:
    """Estimate several TARGETS (runs) and their difference with the ranker that logged LOG."""
    from .. import counterfactual as cf

    cols = _columns(kw)
    exam = _examination(examination)
    model, shown = _model_for(log, estimator, click_model, exam, cols)
    table = cf.compare(log, {t: t for t in targets}, estimator=estimator, measure=measure, click_model=model,
                       examination=exam, clip=clip, confidence=confidence, convention=convention, **cols)
    rows = table.to_pylist()
    if html:
        from ..web.counterfactual_report import write_counterfactual_report

        write_counterfactual_report(html, model=shown, rows=rows, title=f"Counterfactual comparison on {log}")
    if fmt == "json":
        _json(rows)
        return
    _print(table.column_names, rows, fmt)
