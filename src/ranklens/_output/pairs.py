"""The writers of a comparison of every pair of runs (``compare(..., pairs="all")``), the registry's kind ``pairs``
(:mod:`ranklens._output.formats`): per measure, the runs with their compact letters, the significance matrix, the
pairs; the omnibus tests and the discriminative power. Each writer is ``write(c, digits, per_query) -> text``."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Protocol, runtime_checkable

from .._base.display import html_table, latex_escape, latex_table, markdown_table, text_table
from .._core.schema import format_value, plain
from .writers import CORRECTION_NAMES, format_p

__all__ = ["PAIR_FIELDS", "SUMMARY_FIELDS", "PairwiseLike", "pairs_csv", "pairs_json", "pairs_latex", "pairs_text"]

#: The fields of a pair's row, in the order of csv.
PAIR_FIELDS = [
    "measure", "run", "other", "mean", "other_mean", "n", "estimate", "ci_low", "ci_high", "hsd_low", "hsd_high",
    "wins", "ties", "losses", "effect_size", "effect_low", "effect_high", "test", "statistic", "p_value",
    "p_adjusted", "significant",
]
#: The fields of a run's row.
SUMMARY_FIELDS = ["measure", "run", "mean", "n", "ci_low", "ci_high", "letters"]

_CORRECTIONS = {
    **CORRECTION_NAMES,
    "tukey": "none needed: the Tukey HSD holds the family-wise error over the pairs of each measure",
}


@runtime_checkable
class PairwiseLike(Protocol):
    """What the renderers read of a :class:`~ranklens.compare.PairwiseComparison`."""

    runs: list[str]
    measures: list[str]
    summary: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    omnibus: list[dict[str, Any]]
    power: dict[str, float]
    settings: dict[str, Any]
    notes: list[str]
    sakai: dict[str, dict[str, Any]]


def _sections(c: PairwiseLike, digits: int) -> list[tuple[str, list[str], list[list[str]]]]:
    """Per measure three tables (title, header, rows): the runs by mean, the matrix of adjusted p-values, the
    pairs."""
    f = lambda v: format_value(v, digits)  # noqa: E731
    s = c.settings
    ci = f"{s['confidence']:.0%} CI"
    out = []
    for m in c.measures:
        runs = sorted((r for r in c.summary if r["measure"] == m), key=lambda r: -r["mean"])
        out.append((f"{m}: every pair, {s['test']} test", ["run", "mean", ci, "queries", "letters"],
                    [[r["run"], f(r["mean"]), f"[{f(r['ci_low'])}, {f(r['ci_high'])}]", str(r["n"]), r["letters"]]
                     for r in runs]))
        order = [r["run"] for r in runs]
        cell: dict[tuple[str, str], str] = {}
        pairs = [r for r in c.rows if r["measure"] == m]
        for r in pairs:
            cell[(r["run"], r["other"])] = cell[(r["other"], r["run"])] = \
                format_p(r["p_adjusted"]) + ("*" if r["significant"] else "")
        out.append((f"{m}: adjusted p-values (* significant at alpha={s['alpha']:g})", ["run"] + order,
                    [[a] + ["-" if a == b else cell[(a, b)] for b in order] for a in order]))
        tukey = s["test"] in ("tukey", "tukey_oneway")
        head = ["run", "other", "estimate", ci] + (["HSD interval"] if tukey else []) + [
            "W/T/L", "d", f"{ci} d", "p", "p (adj.)"]
        body = []
        for r in pairs:
            row = [r["run"], r["other"], f"{r['estimate']:+.{digits}f}", f"[{f(r['ci_low'])}, {f(r['ci_high'])}]"]
            if tukey:
                row.append(f"[{f(r['hsd_low'])}, {f(r['hsd_high'])}]")
            row += [f"{r['wins']}/{r['ties']}/{r['losses']}", format_value(r["effect_size"], 2),
                    f"[{format_value(r['effect_low'], 2)}, {format_value(r['effect_high'], 2)}]",
                    format_p(r["p_value"]), format_p(r["p_adjusted"]) + ("*" if r["significant"] else "")]
            body.append(row)
        out.append((f"{m}: pairs (estimate = run - other)", head, body))
    return out


def _legend(c: PairwiseLike) -> list[str]:
    s = c.settings
    lines = []
    for m in c.measures:
        om = {o["test"]: o for o in c.omnibus if o["measure"] == m}
        a, fr = om["rm_anova"], om["friedman"]
        n_pairs = sum(1 for r in c.rows if r["measure"] == m)
        lines.append(f"{m}: repeated-measures ANOVA F({a['df'][0]:g}, {a['df'][1]:g}) = "
                     f"{format_value(a['statistic'], 4)}, p = {format_p(a['p_value'])}; "
                     f"Friedman chi2({fr['df'][0]:g}) = {format_value(fr['statistic'], 4)}, "
                     f"p = {format_p(fr['p_value'])}; discriminative power "
                     f"{round(c.power[m] * n_pairs)}/{n_pairs} pairs = {format_value(c.power[m], 4)}")
        if m in c.sakai:
            d = c.sakai[m]
            how = "paired bootstrap, Sakai 2006" if d["method"] == "bootstrap" else "randomised Tukey HSD, Sakai 2012"
            lines.append(f"{m}: Sakai's discriminative power ({how}, {d['n_resamples']} resamples): "
                         f"{d['significant']}/{d['pairs']} pairs with ASL < {d['alpha']:g} = "
                         f"{format_value(d['power'], 4)}; estimated difference required "
                         f"{format_value(d['required_difference'], 4)}")
    resampled = s["test"] in ("randomization", "bootstrap", "randomized_tukey")
    lines += [
        f"test: {s['test_description']}" + (f", {s['n_resamples']} resamples, seed {s['seed']}" if resampled else ""),
        f"correction: {_CORRECTIONS[s['correction']]}, over {s['n_tests']} tests (pairs x measures)"
        if s["correction"] != "tukey" else f"correction: {_CORRECTIONS['tukey']}",
        "letters: runs sharing a letter do not differ significantly (compact letter display, Piepho 2004)",
        (f"intervals: {s['ci_method']} bootstrap over queries ({s['n_resamples']} resamples, seed {s['seed']})"
         if s["ci_method"] != "t" else "intervals: Student's t") + "; d = Cohen's d_z with a percentile bootstrap "
        f"interval; W/T/L = queries where run is above / equal to / below other; convention: {s['convention']}",
    ]
    return lines + [f"note: {n}" for n in c.notes]


def pairs_csv(c: PairwiseLike, digits: int = 4, per_query: bool = False) -> str:
    """The csv format: one line per pair and measure, every field (:data:`PAIR_FIELDS`), full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(PAIR_FIELDS)
    for r in c.rows:
        vals = [plain(r.get(k)) for k in PAIR_FIELDS]
        w.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in vals])
    return buf.getvalue()


def pairs_latex(c: PairwiseLike, digits: int = 4, per_query: bool = False) -> str:
    """The latex format: booktabs tables per measure, the letters as superscripts of the means."""
    out = []
    for title, head, rows in _sections(c, digits):
        if head[-1] == "letters":  # the runs: letters as superscripts of the means
            rows = [[latex_escape(r[0]), f"{r[1]}$^{{\\mathrm{{{r[4]}}}}}$", latex_escape(r[2]), r[3]] for r in rows]
            lines = latex_table(head[:4], [], [title])
            out += lines[:-2] + [" & ".join(r) + " \\\\" for r in rows] + lines[-2:] + [""]
        else:
            out += latex_table(head, rows, [title], left=2 if head[1] == "other" else 1) + [""]
    return "\n".join(out + ["% " + line for line in _legend(c)]) + "\n"


def pairs_json(c: PairwiseLike, digits: int = 4, per_query: bool = False) -> str:
    """The json format (full precision: ``digits`` unused)."""
    return json.dumps(plain({
        "kind": "pairwise_comparison", "runs": c.runs, "measures": c.measures, "settings": c.settings,
        "summary": c.summary, "pairs": c.rows, "omnibus": c.omnibus, "discriminative_power": c.power,
        "sakai_power": c.sakai, "notes": c.notes}), indent=2, allow_nan=False)


def pairs_text(c: PairwiseLike, digits: int = 4, per_query: bool = False, fmt: str = "table") -> str:
    """The table, markdown and html formats: per measure the runs with their letters, the significance matrix and
    the pairs, then the legend."""
    sections = _sections(c, digits)
    if fmt == "table":
        out: list[str] = []
        for title, head, rows in sections:
            out += [title] + text_table(head, rows) + [""]
        return "\n".join(out + _legend(c))
    if fmt == "markdown":
        out = []
        for title, head, rows in sections:
            out += [f"**{title}**", ""] + markdown_table(head, rows, left=2 if head[1] == "other" else 1) + [""]
        return "\n".join(out + _legend(c)) + "\n"
    (t0, h0, r0), rest = sections[0], sections[1:]  # html
    return html_table(h0, r0, title=f"ranklens: {len(c.runs)} runs, every pair; {t0}", sections=rest,
                      notes=_legend(c), left=(0, 1))
