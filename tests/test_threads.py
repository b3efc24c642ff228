"""Results do not depend on the number of threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

import ranklens
from ranklens._kernels import api


def test_same_values_for_any_thread_count(tmp_path):
    rng = np.random.default_rng(7)
    n_q, n = 300, 40
    labels = rng.integers(0, 4, size=(n_q, n))
    scores = np.round(rng.standard_normal((n_q, n)), 1)  # many ties
    measures = ["ndcg@10", "map", "mrr", "err@5", "recall@20", "P@3"]
    code = (
        "import json, sys, numpy as np, ranklens\n"
        "from ranklens._base.threads import set_threads\n"
        "set_threads(int(sys.argv[1]))\n"
        f"rng = np.random.default_rng(7); labels = rng.integers(0, 4, size=({n_q}, {n}));"
        f" scores = np.round(rng.standard_normal(({n_q}, {n})), 1)\n"
        f"res = ranklens.evaluate(labels, scores, {measures!r})\n"
        "print(json.dumps(res.values.tolist()))\n"
    )
    outs = []
    for threads in (1, 2):
        env = dict(os.environ, RANKLENS_KERNELS="jit")  # the parallel kernels (small work runs serial otherwise)
        out = subprocess.run([sys.executable, "-c", code, str(threads)], capture_output=True, text=True, check=True,
                             env=env).stdout
        outs.append(json.loads(out))
    assert outs[0] == outs[1]
    # and equal to this process's own run, on the serial ahead-of-time kernels
    with api.forced("aot"):
        here = ranklens.evaluate(labels, scores, measures).values.tolist()
    assert here == outs[0]


def test_cli_threads_option(tmp_path):
    q = tmp_path / "q.txt"
    r = tmp_path / "r.txt"
    q.write_text("a 0 x 1\na 0 y 0\n")
    r.write_text("a Q0 x 1 1.0 s\na Q0 y 2 2.0 s\n")
    exe = os.path.join(os.path.dirname(sys.executable), "ranklens")
    out = subprocess.run([exe, "--threads", "1", "eval", str(q), str(r), "-m", "mrr", "-f", "json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["aggregate"]["mrr"] == 0.5
    bad = subprocess.run([exe, "--threads", "0", "eval", str(q), str(r)], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
