"""Stores for the dashboard tests: a hand-made one (the seed's groups x, y, z) and one filled by the simulator."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from web_support import LiveServer, client_for, seed_events


@pytest.fixture(scope="session")
def seed_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    from ranklens.monitor import Store

    d = tmp_path_factory.mktemp("seedstore")
    path = str(d / "seed.duckdb")
    Store(path, config={}).ingest(seed_events())
    return path


@pytest.fixture(scope="session")
def sim_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small store filled by the simulator, with alerts recorded by the monitors."""
    from ranklens.monitor import Store
    from ranklens.monitor.simulate import simulate

    d = tmp_path_factory.mktemp("simstore")
    path = str(d / "sim.duckdb")
    events = simulate(None, days=14, groups_per_day=150, seed=3, decay_start="2026-10-09", v2_start="2026-10-05",
                      second_model=True, training_groups=400)
    st = Store(path, config={})
    st.ingest(events)
    st.check(all_windows=True, notify=False)
    return path


@pytest.fixture(scope="session")
def seed_client(seed_store: str) -> Any:
    return client_for(seed_store, config={})


@pytest.fixture(scope="session")
def sim_client(sim_store: str) -> Any:
    return client_for(sim_store, config={})


@pytest.fixture(scope="session")
def live_sim(sim_store: str) -> Any:
    from ranklens.web import create_app

    srv = LiveServer(create_app(sim_store, config={}))
    yield srv
    srv.stop()
