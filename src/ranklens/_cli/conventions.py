"""``ranklens conventions``: the named conventions, or the fields of some."""

from __future__ import annotations

import click

from .main import format_option

__all__ = ["conventions_cmd"]



@click.command("conventions")
@click.argument("names", nargs=-1)
@format_option("document")
def conventions_cmd(names: tuple[str, ...], fmt: str) -> None:
    """List the named conventions, or show the fields of some."""
    from .._defs.presets import CONVENTIONS, get_convention
    from .._output.render import Document, render_document

    chosen = [get_convention(n) for n in names] if names else list(CONVENTIONS.values())
    click.echo(render_document(Document(lambda: _text(names), lambda: {c.name: c.as_dict() for c in chosen}), fmt))


def _text(names: tuple[str, ...]) -> str:
    from .._defs.presets import CONVENTIONS, get_convention

    if not names:
        w = max(len(n) for n in CONVENTIONS)
        return "\n".join(f"{name:<{w}}  {c.description}" for name, c in CONVENTIONS.items())
    lines = []
    for name in names:
        c = get_convention(name)
        lines.append(f"[{c.name}]  {c.mirrors}")
        lines += [f"  {key} = {value!r}" for key, value in c.as_dict().items()
                  if key not in ("name", "description", "mirrors")]
    return "\n".join(lines)
