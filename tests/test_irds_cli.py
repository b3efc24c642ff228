"""``ranklens eval irds:<id>``: the qrels (and scoreddocs) of an ir_datasets dataset, read through the real package.

A dataset of local files is registered in ir_datasets' own registry inside the test; the values are pytrec_eval's
on the same files. A dataset whose files are not on the machine is refused in one line, with every socket
refusing to resolve or connect (so a download attempt would show as another error).
"""

from __future__ import annotations

import json
import socket
import sys
import uuid

import pytest

from ranklens._cli.main import main

pytestmark = pytest.mark.peer

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\nq2 0 d6 3\n"
RUN = ("q1 Q0 d2 1 3.0 a\nq1 Q0 d3 2 2.0 a\nq1 Q0 d1 3 1.0 a\n"
       "q2 Q0 d6 1 0.9 a\nq2 Q0 d5 2 0.8 a\nq2 Q0 d7 3 0.7 a\nq2 Q0 d4 4 0.1 a\n")


def _main(args, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    out = capsys.readouterr()
    return exit_.value.code, out.out, out.err


@pytest.fixture()
def dataset(tmp_path):
    irds = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecScoredDocs
    from ir_datasets.util import LocalDownload

    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    name = f"ranklens-test/{uuid.uuid4().hex}"
    irds.registry.register(name, Dataset(TrecQrels(LocalDownload(tmp_path / "qrels"), {}),
                                         TrecScoredDocs(LocalDownload(tmp_path / "run"))))
    return name, tmp_path


def _pytrec(tmp_path, measures):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = {}, {}
    for line in QRELS.splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    for line in RUN.splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    per = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
    return {m: sum(v[m] for v in per.values()) / len(per) for m in measures}


@pytest.mark.parametrize("run_arg", ["irds", "file"])
def test_eval_irds_qrels_and_scoreddocs_equal_pytrec_eval(dataset, capsys, run_arg):
    name, tmp = dataset
    run = f"irds:{name}" if run_arg == "irds" else str(tmp / "run")
    code, out, err = _main(["eval", f"irds:{name}", run, "-c", "trec_eval", "-m", "ndcg_cut.10", "-m", "map",
                            "-m", "recip_rank", "-f", "json"], capsys)
    assert code == 0, err
    got = json.loads(out)["aggregate"]
    want = _pytrec(tmp, ["ndcg_cut_10", "map", "recip_rank"])
    assert got["ndcg_cut.10"] == pytest.approx(want["ndcg_cut_10"], abs=1e-12)
    assert got["map"] == pytest.approx(want["map"], abs=1e-12)
    assert got["recip_rank"] == pytest.approx(want["recip_rank"], abs=1e-12)


def test_eval_irds_data_absent_is_refused_without_network(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ir_datasets")
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "empty"))
    attempts = []

    def no_connect(self, *args):
        attempts.append(args)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kw: no_connect(None, *args))
    (tmp_path / "run").write_text(RUN)
    code, out, err = _main(["eval", "irds:msmarco-passage/trec-dl-2019/judged", str(tmp_path / "run")], capsys)
    assert code == 2 and not attempts
    assert len(err.strip().splitlines()) == 1 and "not on this machine" in err and "does not download" in err, err
    code, _, err = _main(["eval", "irds:no-such-dataset/at-all", str(tmp_path / "run")], capsys)
    assert code == 2 and "no ir_datasets dataset has the id 'no-such-dataset/at-all'" in err, err


def test_eval_irds_without_the_package_names_pip_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import ir_datasets -> ImportError
    (tmp_path / "run").write_text(RUN)
    code, _, err = _main(["eval", "irds:msmarco-passage/trec-dl-2019/judged", str(tmp_path / "run")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "pip install ir_datasets" in err, err
