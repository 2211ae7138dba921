"""``studio replay ROUND.json``: re-check a recorded round and print its settlement as JSON."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import typer

from studio.errors import StudioError
from studio.rules.errors import ReplayInputError
from studio.rules.record import (
    ROUND_EVENT,
    NothingToCheck,
    RecordedRound,
    cut_after,
    differences,
    is_round_record,
    record_differences,
    recorded_round,
    refund_differences,
)
from studio.rules.replay import cancel_round, replay_round, scenario_parts, unmet_expectations
from studio.text import NotUtf8Error, utf8_text


def replay_command(
    file: Path | None = typer.Argument(
        None,
        help="round document, scenario file or round record (the console's export.json, "
        "GET /api/rounds/{id}); see docs/replay.md; '-' reads stdin",
    ),
    compact: bool = typer.Option(False, "--compact", help="one-line JSON"),
    round_id: str | None = typer.Option(
        None, "--round", help="a round of the database (with --database) instead of a file"
    ),
    database: str | None = typer.Option(
        None, "--database", help="database URL to read --round from (read only)"
    ),
    logic: int | None = typer.Option(
        None,
        "--logic",
        help="round record: the engine logic to replay with, for a round whose round_opened "
        "names none (opened before 2026-12-06)",
    ),
) -> None:
    """Replay a recorded round through the rules engine and print the settlement as JSON.

    A round record (export.json, REST) is also compared with its logged settlement (a
    cancelled round: replayed as far as it went, cancelled, and compared with its logged
    refunds): exit 0 when they match, 1 when they differ (or the record is malformed), 3 when
    the round has nothing to re-check (not over, not in the database), 2 for a usage error.
    """
    if round_id is not None or database is not None:
        if round_id is None or database is None or file is not None:
            typer.echo("error: give --round ID and --database URL together, and no file", err=True)
            raise typer.Exit(2)
        try:
            record, cut_before = asyncio.run(_database_record(database, round_id))
        except StudioError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(_input_exit(exc)) from None
        _check_record(record, compact=compact, logic=logic, cut_before=cut_before)
        return
    if file is None:
        typer.echo("error: give a file (or '-'), or --round ID --database URL", err=True)
        raise typer.Exit(2)
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
    if is_round_record(data):
        # A round record as the console exports it or REST answers it (docs/replay.md, *A
        # round record*): replayed and compared with its logged settlement.
        _check_record(data, compact=compact, logic=logic)
        return
    if logic is not None:
        typer.echo("error: --logic is for a round record; a round document has 'logic'", err=True)
        raise typer.Exit(2)
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


def _check_record(
    record: dict[str, Any], *, compact: bool, logic: int | None, cut_before: bool = False
) -> None:
    """Replay a round record, print the replay's settlement (stdout) and how it compares with
    the logged one (stderr); exit 1 when they differ or the round cannot be replayed, 3 when
    it has nothing to re-check (not over). A cancelled round: see :func:`_check_cancelled`."""
    try:
        recorded = recorded_round(record, logic=logic, cut_before=cut_before)
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(_input_exit(exc)) from None
    name = f"round {recorded.round_id}"
    engine = recorded.engine_logic if recorded.engine_logic is not None else "latest"
    cut = "; the cut card came out before it opened" if cut_before else ""
    typer.echo(f"{name} (table {recorded.table}): engine logic {engine}{cut}", err=True)
    for note in recorded.notes:
        typer.echo(f"note: {note}", err=True)
    if recorded.cancelled is not None:
        _check_cancelled(recorded, compact=compact)
        return
    try:
        result = replay_round(recorded.document)
    except StudioError as exc:
        typer.echo(f"error: {name} does not replay: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(json.dumps(result) if compact else pretty_json(result))
    replayed = {k: v for k, v in result.items() if k != "events"}
    # The settlement field by field; then what the record says beside it: each wager's money
    # as charged (`taken`, `added`) and the summary's totals and players.
    differ = differences(recorded.settled, replayed) + record_differences(recorded, replayed)
    same = [
        key
        for key in replayed
        if key in recorded.settled and not differences(recorded.settled[key], replayed[key])
    ]
    if same:
        typer.echo(f"matches: {', '.join(same)}", err=True)
    for line in differ:
        typer.echo(f"differs: {line}", err=True)
    if not differ:
        totals = replayed.get("totals") or {}
        wagers = sum(len(box.get("wagers", [])) for box in replayed.get("boxes", []))
        money = ", ".join(f"{key} {value}" for key, value in totals.items())
        typer.echo(
            f"{name}: the replay matches the recorded settlement ({wagers} wagers; {money})",
            err=True,
        )
        return
    if _cut_unseen(recorded, replayed, cut_before):
        typer.echo(
            "note: the record holds no cut card: one that came out between the previous "
            "round and this one is logged in the previous round's record; "
            "`studio replay --round ID --database URL` reads it there",
            err=True,
        )
    typer.echo(
        f"{name}: the replay differs from the recorded settlement in {len(differ)} field(s)",
        err=True,
    )
    raise typer.Exit(1)


def _check_cancelled(recorded: RecordedRound, *, compact: bool) -> None:
    """A cancelled round (GAME-FACTS 4: a void refunds all bets): its record replayed through
    the rules engine as far as it goes (bets, cards, decisions so far), then cancelled as the
    controller cancels it; the replay's refunds (stdout) compared field for field with
    ``round_cancelled``'s ``refunds``, each wager's refund with what it was charged, and the
    summary with the replay (stderr). A record that does not replay is still checked refund
    against charge, and says so; exit 0 when all match, 1 when any differs or the record
    does not replay."""
    name = f"round {recorded.round_id}"
    assert recorded.cancelled is not None
    why = f" ({recorded.cancel_reason})" if recorded.cancel_reason else ""
    typer.echo(f"{name} was cancelled{why}: re-checking its refunds", err=True)
    charges = (
        "each wager's refund against what it was charged (its bet as taken and what was added "
        "since)"
        if recorded.charged is not None
        else "not what each wager was charged (its engine logic, below 6, logs no 'added')"
    )
    try:
        result = cancel_round(recorded.document, recorded.cancelled)
    except StudioError as exc:
        if recorded.charged is None:
            typer.echo(f"error: {name} does not replay: {exc}", err=True)
            raise typer.Exit(1) from None
        # Still checked refund against charge, for whoever looks into it; but exit 1, as a
        # settled round that does not replay: a tool that stops short of the refunds field
        # for field must not answer as one that found them right.
        typer.echo(f"error: {name} does not replay through the rules engine: {exc}", err=True)
        differ = refund_differences(recorded)
        for line in differ:
            typer.echo(f"differs: {line}", err=True)
        typer.echo(f"checked: only {charges}; not the refunds field for field", err=True)
        if differ:
            typer.echo(
                f"{name}: the recorded refunds differ from what was charged in "
                f"{len(differ)} field(s)",
                err=True,
            )
        else:
            typer.echo(f"{name}: each recorded refund is what its wager was charged", err=True)
        raise typer.Exit(1) from None
    typer.echo(json.dumps(result) if compact else pretty_json(result))
    replayed = {k: v for k, v in result.items() if k != "events"}
    refunds = recorded.settled
    differ = (
        differences(refunds, replayed)
        + record_differences(recorded, replayed)
        + refund_differences(recorded)
    )
    same = [
        key for key in replayed if key in refunds and not differences(refunds[key], replayed[key])
    ]
    if same:
        typer.echo(f"matches: {', '.join(same)}", err=True)
    for line in differ:
        typer.echo(f"differs: {line}", err=True)
    typer.echo(
        "checked: the round replayed as far as its record goes and cancelled, its refunds "
        f"field for field; {charges}; the summary",
        err=True,
    )
    if differ:
        typer.echo(
            f"{name}: the replay differs from the recorded refunds in {len(differ)} field(s)",
            err=True,
        )
        raise typer.Exit(1)
    totals = replayed.get("totals") or {}
    wagers = sum(len(box.get("wagers", [])) for box in replayed.get("boxes", []))
    money = ", ".join(f"{key} {value}" for key, value in totals.items())
    typer.echo(
        f"{name}: the replay matches the recorded refunds ({wagers} wagers; {money})", err=True
    )


def _input_exit(exc: StudioError) -> int:
    """The exit code of a round record that cannot be re-checked: 3, nothing to re-check (not
    over, not in the database); 1, a malformed record; 2, the database's error."""
    if isinstance(exc, NothingToCheck):
        return 3
    return 1 if isinstance(exc, ReplayInputError) else 2


def _cut_unseen(recorded: RecordedRound, replayed: dict[str, Any], cut_before: bool) -> bool:
    return (
        recorded.settled.get("reshuffle_after_round") is True
        and replayed.get("reshuffle_after_round") is False
        and not recorded.cut_in_record
        and not cut_before
    )


async def _database_record(url: str, round_id: str) -> tuple[dict[str, Any], bool]:
    """Round ``round_id``'s record read from the database at ``url`` (read only), as REST
    answers it; and whether the cut card came out between its previous round and it."""
    # Here, not at the top: the rules engine imports no storage.
    from studio.store import EventLog, LogRecord, RoundIndex
    from studio.store.cli import audited_database

    def as_record(summary: dict[str, Any], records: list[LogRecord]) -> dict[str, Any]:
        events = [
            {"log_id": r.id, "ts": r.ts, "kind": r.kind, **_payload(r.kind, r.payload)}
            for r in records
        ]
        return {"summary": summary, "events": events}

    async with audited_database(url) as db:
        rounds, log = RoundIndex(db), EventLog(db)
        summary = await rounds.get(round_id)
        if summary is None:
            raise NothingToCheck(f"no round {round_id!r} in the database")
        record = as_record(summary, await log.read(round_id=round_id))
        # The cut card out between rounds is logged under the round before (docs/replay.md).
        table, _, number = round_id.rpartition("-R")
        previous = f"{table}-R{int(number) - 1}" if number.isdigit() else None
        cut_before = False
        if previous is not None:
            before = await log.read(round_id=previous, kinds=[ROUND_EVENT])
            cut_before = cut_after(as_record({}, before))
    return record, cut_before


def _payload(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    if kind == ROUND_EVENT:
        return {"seq": payload.get("seq"), "type": payload.get("type"), "data": payload.get("data")}
    return {"data": payload}


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
