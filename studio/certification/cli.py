"""``studio rtp`` and ``studio shoe-stats``: certification math on the command line."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import typer

from studio.errors import ConfigError, RuleError, StudioError

NO_CONSENT_STRATEGY = "engine basic strategy, without consent"
BEHIND_STRATEGY = "bet behind (no double, first split hand only)"
BEHIND_NOTE = (
    "bet behind with behind_double false and behind_split first_hand: the seated player "
    "plays the engine strategy; the behind stake is not doubled (the hand takes one card) "
    "and stays on the first hand of a split, as a wager without consent (the engine's "
    "same rule); a behind bet that follows every double and split is the first line"
)
NO_CONSENT_NOTE = (
    "without consent (a Majority Rules or Best Strategy wager's default): the box plays the "
    "engine strategy, but a double is one card at the original stake (hit, then stand) and "
    "a split leaves the stake on the first hand (seed 004)"
)


def _fail(message: str) -> typer.Exit:
    one_line = " ".join(message.split())
    typer.echo(f"error: {one_line}", err=True)
    return typer.Exit(2)


def _published(obj: Any) -> Decimal | None:
    """A published RTP claim (percent) if the rule set model carries one."""
    value = getattr(obj, "published_rtp", None)
    return None if value is None else Decimal(str(value))


def _table_ruleset(table: str, config: Path | None) -> tuple[Any, str]:
    """The rule-set spec a configured table runs, and where it was read, for the report."""
    from studio.config.loader import load_config

    path = config or os.environ.get("STUDIO_CONFIG") or None
    if path is None:
        # Without a file load_config gives the defaults, which have no table at all.
        raise ConfigError(
            "--table reads the studio configuration, and none was given: "
            "name it with --config FILE or the STUDIO_CONFIG variable"
        )
    settings = load_config(path)
    ids = [t.id for t in settings.tables]
    if table not in ids:
        raise ConfigError(f"no table {table!r} in {path}; tables: {', '.join(ids) or 'none'}")
    return settings.table(table).ruleset, f" — table {table} of {path}"


def rtp(
    ruleset: str | None = typer.Option(
        None,
        "--ruleset",
        "-r",
        help="preset name or rule-set file (JSON/YAML); default majority_speed",
    ),
    table: str | None = typer.Option(
        None,
        "--table",
        help="the rule set a configured table runs (config: --config or $STUDIO_CONFIG)",
    ),
    config: Path | None = typer.Option(
        None, "--config", help="studio configuration for --table (default: $STUDIO_CONFIG)"
    ),
    decks: int | None = typer.Option(None, "--decks", min=1, max=8, help="override the decks"),
    side_bets: bool = typer.Option(False, "--side-bets", help="side bets only (with --main: both)"),
    main: bool = typer.Option(False, "--main", help="main game only (with --side-bets: both)"),
    simulate: int = typer.Option(
        0, "--simulate", min=0, help="also play N rounds through the engine"
    ),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="processes for --simulate (default: all cores)"
    ),
    seed: int | None = typer.Option(None, "--seed", help="seed for --simulate"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Exact RTP of the main game and of every side bet of a rule set."""
    from studio.certification import report
    from studio.certification.main_game import GameRules, analyse
    from studio.certification.rulesets import (
        base_preset,
        claim_basis,
        describe_main_rules,
        engine_policy,
        game_rules,
        load_ruleset,
        read_ruleset_spec,
        rules_digest,
        side_bet_result,
        with_decks,
    )
    from studio.rules.ruleset import DecisionMode, ruleset_from_spec

    try:
        if table is not None and ruleset is not None:
            raise _fail("give either --ruleset or --table, not both")
        if table is None and config is not None:
            raise _fail("--config names the configuration of a --table")
        if table is not None:
            spec, where = _table_ruleset(table, config)
            rules = with_decks(ruleset_from_spec(spec), decks)  # as the controller does
        else:
            spec = read_ruleset_spec(ruleset or "majority_speed")
            rules = with_decks(load_ruleset(ruleset or "majority_speed"), decks)
            where = ""
        # The preset the spec builds on: its claims are the ones inherited, whatever name
        # the spec gives the rule set (a renamed 2-deck majority_speed is not the seed's game).
        base = base_preset(spec)
        do_side = side_bets or not main
        do_main = main or not side_bets
        digest = rules_digest(rules)
        out: dict[str, Any] = {
            "ruleset": rules.name,
            "table": table,
            "decks": rules.shoe.decks,
            "rules_sha256": digest,
            "rules": rules.model_dump(mode="json"),
        }
        texts: list[str] = [
            f"Rule set {rules.name} ({rules.source or 'custom'}){where}: {rules.shoe.decks} decks, "
            f"dealer {'H17' if rules.dealer.hits_soft_17 else 'S17'}, "
            f"{rules.dealer.hole_card.value.upper()} hole card, peek {rules.dealer.peek.value}\n"
            f"{describe_main_rules(rules)}\n"
            f"rules sha256 {digest}"
        ]
        if do_side:
            items = []
            for kind, sb in rules.side_bets.items():
                started = time.perf_counter()
                result = side_bet_result(kind, sb.paytable, rules)
                items.append(
                    report.TimedSideBet(
                        kind.value,
                        result,
                        time.perf_counter() - started,
                        _published(sb),
                        claim_basis(rules, kind, base=base),
                    )
                )
            out["side_bets"] = [report.side_bet_json(i) for i in items]
            if not items:
                texts.append("No side bets in this rule set.")
            texts.extend(report.format_side_bet(i) for i in items)
        main_results = []
        g: GameRules | None = None
        if do_main or simulate:
            try:
                g = game_rules(rules)
            except RuleError as exc:
                if not do_side:
                    raise  # the main game alone was asked for: that is the error
                # A valid rule set the analysis does not cover: the side bets still stand.
                out["main_game"] = None
                out["main_game_error"] = str(exc)
                texts.append(f"Main game not computed: {' '.join(str(exc).split())}")
        if do_main and g is not None:
            main_results.append(
                analyse(g, engine_policy(rules), name="engine basic strategy (total-dependent)")
            )
            main_results.append(analyse(g, None, name="optimal composition-dependent"))
            if rules.table.decision_mode is DecisionMode.MAJORITY_RULES:
                # Seed 004: a player who has not consented to automatic split/double
                # (the wager's default) is not charged for them: another game.
                without = analyse(g, engine_policy(rules), name=NO_CONSENT_STRATEGY, consent=False)
                main_results.append(replace(without, notes=(NO_CONSENT_NOTE,)))
            if rules.table.bet_behind:
                # A behind bet that does not double along and stays on the first split
                # hand is paid by the engine exactly as a wager without consent.
                behind = analyse(g, engine_policy(rules), name=BEHIND_STRATEGY, consent=False)
                main_results.append(replace(behind, notes=(BEHIND_NOTE,)))
            out["main_game"] = [report.main_json(r) for r in main_results]
            claim, basis = _published(rules), claim_basis(rules, base=base)
            out["published_rtp"] = None if claim is None else str(claim)
            out["published_applies"] = None if claim is None else basis is None
            out["published_basis"] = basis
            texts.append(report.format_main(main_results, claim, basis))
        if simulate:
            from studio.certification.simulate import format_simulation, run_simulation

            # Progress goes to stderr, so --json (stdout) keeps it as the text output does.
            sim = run_simulation(rules, simulate, workers=workers, seed=seed)
            exact: float | None = None
            if main_results:
                exact = main_results[0].rtp
            elif g is not None:
                exact = analyse(g, engine_policy(rules)).rtp
            out["simulation"] = sim.as_json(exact)
            texts.append(format_simulation(sim, exact))
    except (StudioError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    else:
        typer.echo("\n\n".join(texts))


def shoe_stats(
    file: Path = typer.Argument(..., help="JSON Lines file of shoe-card events"),
    alpha: float = typer.Option(0.01, "--alpha", help="significance level per shoe"),
    decks: int = typer.Option(8, "--decks", min=1, max=8, help="decks per shoe"),
    flagged_only: bool = typer.Option(False, "--flagged-only", help="list flagged shoes only"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Chi-squared fairness tests of dealt shoes; flags suspicious shoes."""
    from studio.certification.shoe_stats import analyse_jsonl, format_report, report_json

    if not 0 < alpha < 1:
        raise _fail("--alpha must lie strictly between 0 and 1")
    try:
        result = analyse_jsonl(file, decks=decks, alpha=alpha)
    except (StudioError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps(report_json(result), indent=2))
    else:
        typer.echo(format_report(result, all_shoes=not flagged_only))
    if any(s.flagged for s in result.shoes):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("rtp")(rtp)
    app.command("shoe-stats")(shoe_stats)
