"""The options the ``ranklens monitor`` commands share: the store, the configuration, filters, formats, and the
deprecated spellings of renamed options (the one vocabulary)."""

from __future__ import annotations

from typing import Any

import click

from .main import format_option, number

__all__ = ["CONFIG", "FORMAT", "RANGE", "STORE", "WAIT", "WHERE", "one_of", "opts", "print_table",
           "renamed_option", "open_store", "parse_where"]

STORE = click.option("--store", "store_path", default="ranklens.duckdb", envvar="RANKLENS_STORE", show_default=True,
                      type=click.Path(dir_okay=False), help="The DuckDB store (env RANKLENS_STORE).")
CONFIG = click.option("--config", "config_path", default=None, envvar="RANKLENS_CONFIG",
                       type=click.Path(dir_okay=False),
                       help="TOML configuration (default: ./ranklens.toml when present; env RANKLENS_CONFIG).")
WAIT = click.option("--wait", default=30.0, show_default=True, type=number(min=0),
                     help="Seconds to wait for another process writing the store.")
FORMAT = format_option("rows")
WHERE = click.option("--where", "where", multiple=True, metavar="COL=VALUE",
                      help="Filter, repeatable: environment=production, country=BR, model_version=v2 ...")
RANGE = [click.option("--start", default=None, help="Start of the time range (ISO date/time, UTC, inclusive)."),
          click.option("--end", default=None, help="End of the time range (ISO date/time, UTC, exclusive).")]


def renamed_option(old: str, new: str, dest: str, *, multiple: bool = False, short: str | None = None) -> Any:
    """A deprecated spelling of an option (the one vocabulary, docs/glossary.md): hidden, still accepted for one
    release, with a note on stderr naming the new one."""

    def note(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value:
            used = f"{short}/{old}" if short else old
            click.echo(f"ranklens: note: {used} is deprecated here: use {new} (the old name goes in the next release).",
                       err=True)
        return value

    names = [old] + ([short] if short else [])
    return click.option(*names, dest, multiple=multiple, hidden=True, default=() if multiple else None,
                        callback=note)


def one_of(new: str | None, old: str | None, default: str, name: str) -> str:
    """The value of an option given under its new name or its deprecated one (not both)."""
    if new is not None and old is not None:
        raise click.UsageError(f"give {name} once (its old name --metric is the same option)")
    return new or old or default


def opts(*decorators: Any) -> Any:
    def apply(f: Any) -> Any:
        for d in reversed(decorators):
            f = d(f)
        return f

    return apply


def open_store(store_path: str, config_path: str | None, wait: float = 30.0, read_only: bool = False) -> Any:
    from ..monitor.store import Store

    return Store(store_path, config=config_path, wait=wait, read_only=read_only)


def parse_where(items: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for it in items:
        col, sep, val = it.partition("=")
        if not sep or not col.strip():
            raise click.UsageError(f"--where expects COLUMN=VALUE, got {it!r}")
        out.setdefault(col.strip(), []).append(val.strip())
    return {k: (v[0] if len(v) == 1 else v) for k, v in out.items()}


def print_table(table: Any, fmt: str, digits: int = 4) -> None:
    from .._output.render import render_rows

    click.echo(render_rows(table, fmt, digits=digits))


