"""``ranklens conventions``: the named conventions, or the fields of some."""

from __future__ import annotations

import json

import click

from .main import format_option

__all__ = ["conventions_cmd"]



@click.command("conventions")
@click.argument("names", nargs=-1)
@format_option(("table", "json"))
def conventions_cmd(names: tuple[str, ...], fmt: str) -> None:
    """List the named conventions, or show the fields of some."""
    from .._defs.presets import CONVENTIONS, get_convention

    if fmt == "json":
        from .._output.render import plain

        chosen = [get_convention(n) for n in names] if names else list(CONVENTIONS.values())
        click.echo(json.dumps({c.name: plain(c.as_dict()) for c in chosen}, indent=2, allow_nan=False))
        return
    if not names:
        w = max(len(n) for n in CONVENTIONS)
        for name, c in CONVENTIONS.items():
            click.echo(f"{name:<{w}}  {c.description}")
        return
    for name in names:
        c = get_convention(name)
        click.echo(f"[{c.name}]  {c.mirrors}")
        for key, value in c.as_dict().items():
            if key not in ("name", "description", "mirrors"):
                click.echo(f"  {key} = {value!r}")
