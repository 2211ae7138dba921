"""A misspelt key anywhere in the configuration names the key meant, as a device's options
did alone (``studio.keys``, one place for every model), and a pay is taken as the ratio a
table's sign says (``blackjack_pays = "6:5"``). Until 2026-12-07 ``keepalve`` said "check
the spelling", ``blackjack_pay`` pydantic's "Extra inputs are not permitted" and "6:5"
"Input should be a valid decimal" (an operator's review)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from studio.config import load_config
from studio.errors import ConfigError
from studio.rules.ruleset import ruleset_from_spec


def load(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> str:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_config(path, environ=environ or {})
    return str(refused.value)


def test_a_misspelt_section_key_names_the_key_meant(tmp_path: Path) -> None:
    said = load(tmp_path, "[broker]\nkeepalve = 15\n")
    assert said.endswith(
        "broker.keepalve: unknown key (did you mean 'keepalive'? the keys are url, username, "
        "password, client_id_prefix, keepalive, tls; see docs/operations.md)"
    ), said


def test_a_misspelt_key_of_a_table_s_device_names_the_key_meant(tmp_path: Path) -> None:
    text = '[[tables]]\nid = "t1"\n[[tables.devices]]\nid = "s"\nkind = "shoe"\nbaudrat = 9600\n'
    said = load(tmp_path, text)
    assert "tables[0].devices[0].baudrat: unknown key (did you mean 'baudrate'? " in said, said


def test_a_key_like_none_says_check_the_spelling_and_the_keys(tmp_path: Path) -> None:
    said = load(tmp_path, "[web]\nzzz = 1\n")
    assert said.endswith(
        "web.zzz: unknown key (check the spelling; the keys are host, port, platform_token, "
        "secure_cookies, max_connections_per_address; see docs/operations.md)"
    ), said


def test_a_variable_s_misspelt_key_names_the_key_meant(tmp_path: Path) -> None:
    said = load(tmp_path, "", {"STUDIO_BROKER__KEEPALVE": "15"})
    assert (
        "STUDIO_BROKER__KEEPALVE: broker.keepalve: unknown key (did you mean 'keepalive'?" in said
    )
    assert "nested keys take a double underscore" in said, said


def test_a_misspelt_rule_names_the_rule_meant(tmp_path: Path) -> None:
    text = '[[tables]]\nid = "t1"\nruleset = { preset = "classic6", blackjack_pay = "6:5" }\n'
    said = load(tmp_path, text)
    assert (
        "tables[0].ruleset: invalid rule set: blackjack_pay: unknown key (did you mean "
        "'blackjack_pays'? the keys are name, " in said
    ), said
    text = '[[tables]]\nid = "t1"\nruleset = { preset = "classic6", insurance = { pay = 2 } }\n'
    assert "insurance.pay: unknown key (did you mean 'pays'?" in load(tmp_path, text)


@pytest.mark.parametrize(
    ("written", "pays"), [('"6:5"', "1.2"), ('"3:2"', "1.5"), ('" 2 : 1 "', "2"), ("1.2", "1.2")]
)
def test_a_pay_is_taken_as_its_ratio(tmp_path: Path, written: str, pays: str) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(
        f'[[tables]]\nid = "t1"\nruleset = {{ preset = "classic6", blackjack_pays = {written} }}\n'
    )
    rules = ruleset_from_spec(load_config(path, environ={}).tables[0].ruleset)
    assert rules.blackjack_pays == Decimal(pays)
    assert rules.model_dump(mode="json")["blackjack_pays"] == pays  # as logged


@pytest.mark.parametrize(
    ("written", "words"),
    [
        ('"six to five"', "a decimal multiple of the stake, e.g. 1.5 (3:2) or 1.2 (6:5)"),
        ('"7:3"', "'7:3' is no exact decimal (7/3)"),
        ('"6:0"', "'6:0' divides by 0"),
    ],
)
def test_a_pay_that_is_none_says_how_one_is_written(
    tmp_path: Path, written: str, words: str
) -> None:
    text = (
        f'[[tables]]\nid = "t1"\nruleset = {{ preset = "classic6", blackjack_pays = {written} }}\n'
    )
    said = load(tmp_path, text)
    assert "tables[0].ruleset: invalid rule set: blackjack_pays: " in said, said
    assert words in said, said


@pytest.mark.parametrize(
    ("rule", "written"),
    [
        ("blackjack_pays", '"65"'),  # "6:5" with its colon dropped: played as 65:1 before
        ("blackjack_pays", '"15"'),  # 1.5 with its point dropped
        ("blackjack_pays", '"1e30"'),  # no payout of it could be rounded: the table stopped
        ("insurance", '{ pays = "20" }'),
    ],
)
def test_a_pay_more_than_two_to_one_is_refused(tmp_path: Path, rule: str, written: str) -> None:
    text = f'[[tables]]\nid = "t1"\nruleset = {{ preset = "classic6", {rule} = {written} }}\n'
    said = load(tmp_path, text)
    field = "insurance.pays" if rule == "insurance" else rule
    assert f"tables[0].ruleset: invalid rule set: {field}: " in said, said
    assert "to 1 is more than this pays at any table (at most 2, 2:1)" in said, said


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        # A side bet's line: the seeds' largest pays 2,000 to 1.
        (
            'side_bets = { players_pair = { paytable = { kind = "pairs", perfect = "1e30", '
            'coloured = "12", mixed = "6" } } }',
            "Input should be less than or equal to 10000",
        ),
        # A stake has 3 decimals at most: a smaller rounding refused every stake.
        ('rounding = { quantum = "1e-30" }', "Input should be greater than or equal to 0.001"),
    ],
)
def test_a_side_bet_pay_or_rounding_no_table_can_settle_is_refused(
    tmp_path: Path, rule: str, words: str
) -> None:
    text = f'[[tables]]\nid = "t1"\nruleset = {{ preset = "classic6", {rule} }}\n'
    said = load(tmp_path, text)
    assert "tables[0].ruleset: invalid rule set: " in said and words in said, said
