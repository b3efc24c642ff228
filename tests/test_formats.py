"""The one format registry (#28 point 3): every command's -f choices come from it, a registered format is offered
at once, input formats named as outputs get a hint, and the one text-table printer keeps its layouts."""

from __future__ import annotations

import importlib
import json

import click
import pytest
from click.testing import CliRunner

from ranklens._base.display import text_table
from ranklens._cli.main import COMMANDS, OutputFormat, cli
from ranklens._output import formats
from ranklens.errors import InvalidParameterError
from ranklens.render import Document, Format, formats_for, register_format, render, render_document, render_rows

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 e1 1\n"
RUN = "q1 Q0 d1 1 4.0 s\nq1 Q0 d2 2 3.0 s\nq2 Q0 e1 1 2.0 s\n"

# what each command prints: the kind of object its -f option renders
EXPECTED_KINDS = {
    "eval": "result", "compare": "comparison", "explain": "document", "conventions": "document",
    "experiment ab": "rows", "experiment calibrate": "rows", "experiment simulate": "rows",
    "experiment interleaving": "rows",
    "counterfactual fit": "rows", "counterfactual estimate": "rows", "counterfactual compare": "rows",
    "monitor ingest": "document", "monitor check": "document", "monitor explain": "document",
    "monitor report": "rows", "monitor signals": "rows", "fuse": "run",
}


def _commands() -> dict[str, click.Command]:
    """Every command of the CLI, by its path (``monitor report``), the groups walked."""
    out: dict[str, click.Command] = {}

    def walk(prefix: str, cmd: click.Command) -> None:
        out[prefix] = cmd
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(f"{prefix} {name}", sub)

    for name, (module, attr, _) in COMMANDS.items():
        walk(name, getattr(importlib.import_module(module), attr))
    return out


def _format_params(cmd: click.Command) -> list[click.Parameter]:
    # (monitor simulate's --format, without -f, is the format of the event files it writes, not an output format)
    return [p for p in cmd.params if "-f" in getattr(p, "opts", ())]


@pytest.fixture()
def registry(monkeypatch):
    """The registry, restored after the test."""
    monkeypatch.setattr(formats, "_REGISTRY", dict(formats._REGISTRY))
    return formats._REGISTRY


def test_every_format_option_is_the_registrys():
    commands = _commands()
    seen = {}
    for path, cmd in commands.items():
        for p in _format_params(cmd):
            assert isinstance(p.type, OutputFormat), f"{path}: -f is a hand-written {type(p.type).__name__}"
            assert tuple(p.type.choices) == formats_for(p.type.kind), path
            seen[path] = p.type.kind
    # every command that prints one of these kinds is found, and renders the kind it should
    assert {k: v for k, v in seen.items() if k in EXPECTED_KINDS} == EXPECTED_KINDS
    for path, kind in seen.items():
        assert kind in formats.KINDS, path


def test_the_built_in_formats_and_what_they_render():
    assert formats_for("result") == ("table", "json", "csv", "trec", "markdown", "latex", "html")
    assert formats_for("comparison") == ("table", "json", "csv", "markdown", "latex", "html")
    assert formats_for("rows") == ("table", "json", "csv")
    assert formats_for("document") == ("table", "json")
    assert formats_for("pairs") == ("table", "json", "csv", "markdown", "latex", "html")
    assert formats_for("querytable") == ("table", "json", "csv", "markdown", "latex", "html")
    assert formats_for("run") == ("json", "csv", "trec", "tsv", "jsonl", "parquet")


def test_every_pair_tables_and_runs_are_written_through_the_registry(registry, tmp_path):
    import ranklens
    from ranklens.render import write_run

    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(4)}
    runs = {"x": {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(4)},
            "y": {f"q{i}": {"a": 1.0, "b": 2.0} for i in range(4)},
            "z": {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(4)}}
    pc = ranklens.compare(qrels, runs, ["mrr"], pairs="all", n_resamples=99)
    register_format(Format("count", {"pairs": lambda c, digits, per_query: str(len(c.rows)),
                                     "run": lambda run, tag: f"{len(run)} rows {tag}".encode()}))
    assert render(pc, "count") == "3" and pc.render("count") == "3"  # 3 pairs of 3 runs
    assert write_run(ranklens.as_rankings(runs["x"]), format="count", tag="t") == "8 rows t"
    with pytest.raises(InvalidParameterError, match="does not render a comparison of every pair"):
        render(pc, "trec")
    (tmp_path / "a.run").write_text(RUN)
    (tmp_path / "b.run").write_text(RUN)
    res = CliRunner().invoke(cli, ["fuse", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--method", "rrf",
                                   "-f", "count"])
    assert res.exit_code == 0 and res.output == "3 rows rrf", res.output


def test_a_registered_format_is_offered_by_the_commands_of_its_kind(registry, tmp_path):
    register_format(Format("shout", {"document": lambda doc, digits, per_query: doc.text().upper()}))
    runner = CliRunner()
    help_text = runner.invoke(cli, ["conventions", "--help"]).output
    assert "shout" in help_text
    plain = runner.invoke(cli, ["conventions", "trec_eval", "-f", "table"])
    shout = runner.invoke(cli, ["conventions", "trec_eval", "-f", "shout"])
    assert plain.exit_code == 0 and shout.exit_code == 0, shout.output
    assert shout.output == plain.output.upper()
    # not offered where it renders nothing
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    res = runner.invoke(cli, ["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-f", "shout"])
    assert res.exit_code == 2 and "shout" in res.output and "'table'" in res.output
    with pytest.raises(InvalidParameterError, match="does not render a result"):
        from ranklens import evaluate
        render(evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["mrr"]), "shout")


def test_an_input_format_as_output_gets_the_hint_until_it_is_registered(registry, tmp_path):
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    runner = CliRunner()
    args = ["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "mrr"]
    res = runner.invoke(cli, [*args, "-f", "tsv"])
    assert res.exit_code == 2 and "--judgments-format and --run-format" in res.output
    # a tsv writer of results: the same input name is now an output format, no hint in the way
    register_format(Format("tsv", {"result": lambda obj, digits, per_query:
                                   render(obj, "csv", per_query=per_query).replace(",", "\t")}))
    res = runner.invoke(cli, [*args, "-f", "tsv"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "run\tquery\tmeasure\tvalue"
    # the mrr of q1 (d1 relevant, first) and q2 (e1 first): 1 and 1
    assert res.output.splitlines()[-1] == "r\tall\tmrr\t1.0"


def test_unknown_formats_and_kinds_are_refused(registry):
    with pytest.raises(InvalidParameterError, match="`format` must be one of table, json"):
        render_rows((["a"], [{"a": 1}]), "yaml")
    with pytest.raises(InvalidParameterError, match="'trec' does not render a report; a report is rendered as "
                                                    "table, json, csv"):
        render_rows((["a"], [{"a": 1}]), "trec")
    with pytest.raises(InvalidParameterError, match="unknown kind"):
        Format("x", {"slides": lambda o, d, p: ""})
    with pytest.raises(InvalidParameterError, match="`kind` must be one of"):
        formats_for("slides")


def test_documents_render_their_text_and_their_json():
    doc = Document(lambda: "a  1", lambda: {"a": float("nan"), "b": [1, 2]}, indent=1)
    assert render_document(doc) == "a  1"
    assert json.loads(render_document(doc, "json")) == {"a": None, "b": [1, 2]}
    assert render_document(doc, "json").splitlines()[1] == ' "a": null,'


def test_the_one_text_table_printer_and_its_layouts():
    # results and comparisons: first column left, the rest right, a rule
    assert text_table(["m", "value"], [["mrr", "0.5"]]) == ["m    value", "----------", "mrr    0.5"]
    # reports: numbers right, text left (the header too), no rule, no trailing spaces
    assert text_table(["day", "n", "note"], [["2026-10-01", "12", ""], ["x", "nan", "ok"]], align="numbers_right",
                      rule=False, strip=True) == ["day         n    note", "2026-10-01   12", "x           nan  ok"]
    # explanations: every cell right-aligned
    assert text_table(["pos", "gain"], [["1", "3"]], align="right", rule=False) == ["pos  gain", "  1     3"]
    with pytest.raises(ValueError, match="align"):
        text_table(["a"], [], align="center")
    # render_rows lays a report out with it
    assert render_rows((["day", "n"], [{"day": "2026-10-01", "n": 12}])) == "day         n\n2026-10-01  12"
