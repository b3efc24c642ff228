"""The dashboard over a monitoring store and the self-contained HTML report.

* :func:`create_app` builds the ASGI app that ``ranklens serve`` runs (needs ``ranklens[web]``);
* :func:`build_report` / :func:`write_report` make the page that ``ranklens report`` writes.

Importing this package imports neither starlette nor duckdb: :func:`create_app` does, when called.
"""

from .app import create_app
from .report import build_report, write_report

__all__ = ["build_report", "create_app", "write_report"]
