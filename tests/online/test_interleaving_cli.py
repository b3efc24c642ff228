"""ranklens experiment interleaving (and the interleaving log of experiment simulate): numbers equal to the
library's on the same log, every output format, one-line errors with exit status 2."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens import online
from ranklens._cli.experiment_interleaving import read_log_file, write_interleaving_log
from ranklens.cli import main


def _run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


@pytest.fixture(scope="module")
def sim():
    return online.simulate({"control": 1.5, "treatment": 0.5}, n_users=400, n_queries=20, seed=0)


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl"])
def test_outcome_matches_the_library(sim, tmp_path, capsys, kind):
    path = tmp_path / f"log.{kind}"
    rows = write_interleaving_log(sim, str(path), kind, "balanced", "treatment,control", seed=3)
    table = read_log_file(str(path))
    assert table.num_rows == rows
    rng = np.random.default_rng([3, 1])  # write_interleaving_log's own stream for seed 3
    want = online.interleaving_outcome(online.simulate_interleaving(sim, method="balanced", seed=rng),
                                       method="balanced", teams=("treatment", "control")).to_dict()
    code, out, err = _run(["experiment", "interleaving", str(path), "-m", "balanced", "--teams",
                           "treatment,control", "-f", "json"], capsys)
    assert code in (0, None) and err == ""
    assert json.loads(out) == pytest.approx(want)
    code, out, _ = _run(["experiment", "interleaving", str(path), "-m", "balanced", "--teams",
                         "treatment,control", "-f", "csv"], capsys)
    header, line = out.strip().splitlines()
    got = dict(zip(header.split(","), line.split(",")))
    assert int(got["wins"]) == want["wins"] and float(got["delta"]) == pytest.approx(want["delta"], abs=1e-12)


def test_multileaving_pairs_and_table(tmp_path, capsys):
    logs = [online.multileave({"x": [1, 2, 3], "y": [3, 2, 1], "z": [2, 4, 1]}, k=3, seed=s)
            .log(np.array([s % 2, 0, 1]), impression=s) for s in range(40)]
    cols = {c: np.concatenate([lg[c] for lg in logs]) for c in logs[0]}
    path = tmp_path / "m.parquet"
    pq.write_table(pa.table(cols), path)
    code, out, _ = _run(["experiment", "interleaving", str(path), "--teams", "x,y,z", "-f", "json"], capsys)
    rows = json.loads(out)
    want = online.multileaving_outcome(cols, teams=["x", "y", "z"])
    assert len(rows) == 6
    for r in rows:
        p = want.pair(r["team_a"], r["team_b"])
        assert (r["wins"], r["losses"], r["ties"]) == (p.wins, p.losses, p.ties)
    code, out, _ = _run(["experiment", "interleaving", str(path), "--teams", "x,y,z"], capsys)
    assert out.splitlines()[0].split()[:3] == ["method", "team_a", "team_b"] and len(out.splitlines()) == 7


def test_errors_are_one_line_with_status_2(tmp_path, capsys):
    path = tmp_path / "log.csv"
    pcsv.write_csv(pa.table({"impression": [1, 1, 2], "team": ["a", "c", "b"], "click": [1, 0, 0]}), path)
    code, out, err = _run(["experiment", "interleaving", str(path)], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (f"ranklens: error: {path}, column 'team', row 1: unknown team "
                           "label 'c'; the teams are 'a', 'b' (pass `teams=`, or --teams); the column holds 'a', "
                           "'c', 'b'.")
    for args, text in (([str(tmp_path / "none.csv")], "none.csv: No such file or directory"),
                       ([str(tmp_path / "log.txt")], "cannot tell the log's format"),
                       ([str(path), "--teams", "a"], "expected two or more comma-separated labels"),
                       ([str(path), "-m", "balanced", "--teams", "a,b,c"], "balanced interleaving compares two")):
        code, out, err = _run(["experiment", "interleaving", *args], capsys)
        assert code == 2 and text in err and len(err.strip().splitlines()) == 1, err
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    code, _, err = _run(["experiment", "interleaving", str(bad)], capsys)
    assert code == 2 and "bad.parquet: cannot read as parquet" in err


def test_help_lists_the_subcommand():
    res = CliRunner().invoke(__import__("ranklens.cli", fromlist=["cli"]).cli, ["experiment", "--help"])
    assert res.exit_code == 0 and "interleaving" in res.output


def test_simulate_options_parse():
    """The options experiment simulate takes from this module: --interleaving METHOD and --interleave A,B."""
    import click

    from ranklens._cli.experiment_interleaving import interleaving_log_options

    @click.command()
    @interleaving_log_options
    def cmd(interleaving_method, interleave_arms):
        click.echo(f"{interleaving_method} {interleave_arms}")

    res = CliRunner().invoke(cmd, ["--interleaving", "balanced", "--interleave", "treatment,control"])
    assert res.output.strip() == "balanced treatment,control"
    assert CliRunner().invoke(cmd, ["--interleaving", "optimized"]).exit_code == 2


def test_experiment_simulate_writes_an_interleaving_log(tmp_path, capsys):
    path = tmp_path / "il.parquet"
    code, out, err = _run(["experiment", "simulate", str(path), "--users", "600", "--queries", "20", "--seed", "4",
                           "--ranker", "control=1.5", "--ranker", "treatment=0.5", "--interleaving", "team_draft",
                           "-m", "ndcg@10"], capsys)
    assert code in (0, None), err
    assert "an interleaving log (team_draft)" in out and "ndcg@10" in out
    table = pq.read_table(path)
    sim = online.simulate({"control": 1.5, "treatment": 0.5}, n_users=600, n_queries=20, seed=4)
    want = online.simulate_interleaving(sim, seed=np.random.default_rng([4, 1]))
    assert table.equals(want)
    code, out, _ = _run(["experiment", "interleaving", str(path), "--teams", "treatment,control", "-f", "json"],
                        capsys)
    assert json.loads(out)["delta"] > 0
    code, _, err = _run(["experiment", "simulate", str(path), "--users", "50", "--interleaving", "balanced",
                         "--interleave", "treatment"], capsys)
    assert code == 2 and "expected two arms" in err


def test_sequential_options(sim, tmp_path, capsys):
    path = tmp_path / "log.parquet"
    write_interleaving_log(sim, str(path), "parquet", "team_draft", None, seed=5)
    table = read_log_file(str(path))
    want = online.interleaving_outcome(table, teams=("treatment", "control"), look_col="day",
                                       sequential=online.GroupSequential(planned_units=5000)).to_dict()
    code, out, _ = _run(["experiment", "interleaving", str(path), "--teams", "treatment,control", "--sequential",
                         "group_sequential", "--look-col", "day", "--planned-impressions", "5000", "-f", "json"],
                        capsys)
    assert json.loads(out) == pytest.approx(want)
    code, _, err = _run(["experiment", "interleaving", str(path), "--teams", "treatment,control", "--sequential",
                         "always_valid"], capsys)
    assert code == 2 and "`sequential` and `look_col` go together" in err
