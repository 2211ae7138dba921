"""``studio replay ROUND.json``: re-check a recorded round and print its settlement as JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer

from studio.errors import StudioError
from studio.rules.replay import replay_round, scenario_parts, unmet_expectations
from studio.text import NotUtf8Error, utf8_text


def replay_command(
    file: Path = typer.Argument(
        ..., help="round document or scenario file (see docs/replay.md); '-' reads stdin"
    ),
    compact: bool = typer.Option(False, "--compact", help="one-line JSON"),
) -> None:
    """Replay a recorded round through the rules engine and print the settlement as JSON."""
    try:
        raw = typer.get_binary_stream("stdin").read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        typer.echo(f"error: cannot read {file}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    try:
        data = json.loads(utf8_text(raw))
    except NotUtf8Error as exc:
        typer.echo(f"error: {file} is {exc}", err=True)
        raise typer.Exit(2) from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        typer.echo(f"error: {file} is not JSON: {exc.msg} ({where})", err=True)
        raise typer.Exit(2) from None
    except RecursionError:  # the decoder's own limit, ~1000 nested [ or {
        typer.echo(f"error: {file} is not JSON: nested too deeply", err=True)
        raise typer.Exit(2) from None
    try:
        # A scenario file (docs/replay.md, Worked examples) replays its round and checks
        # its expectations; any other document is a round.
        scenario = scenario_parts(data)
        result = replay_round(data if scenario is None else scenario[0])
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(json.dumps(result) if compact else pretty_json(result))
    if scenario is not None and scenario[1]:
        unmet = unmet_expectations(result, scenario[1])
        for line in unmet:
            typer.echo(f"expectation not met: {line}", err=True)
        held = len(scenario[1]) - len(unmet)
        typer.echo(f"scenario: {held} of {len(scenario[1])} expectations hold", err=True)
        if unmet:
            raise typer.Exit(1)


_FLAT_LIST = re.compile(
    r"\[\s*((?:\"[^\"\[\]{}]*\"|-?[0-9.]+)(?:,\s*(?:\"[^\"\[\]{}]*\"|-?[0-9.]+))*)\s*\]"
)


def pretty_json(data: Any) -> str:
    """Indented JSON with lists of plain values (cards, actions) kept on one line."""
    text = json.dumps(data, indent=2)
    return _FLAT_LIST.sub(lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)


def register(app: typer.Typer) -> None:
    """Add the rules engine's commands to the root ``studio`` app."""
    app.command("replay")(replay_command)
