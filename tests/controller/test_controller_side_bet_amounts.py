"""A side bet's amount is money as the stake is: at most 12 digits, 3 after the point, and
0 or more (0 is no side bet). One that is not makes the message no game command (REST
422, MQTT a ``game/command_errors`` notice), and its id stays free for the corrected one.

A review: ``{"21+3": "1.0099999999"}`` was taken as 1.00 (a stake of 5.0001 is a 422), and
``{"21+3": "-1"}`` was refused by the table, a ``command_rejected`` that took the id
(reason ``not an amount of money: Decimal('-1')``), where a stake of -5 is no command.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from bus_support import answered, controller_on_bus
from pydantic import ValidationError
from test_controller_bet_amounts import _open_betting
from test_controller_command_errors import Raw, _errors_topic

from studio.config import BrokerSettings
from studio.contract.topics import Topics
from studio.store import Database

BET = {"type": "bet", "player": "p1", "seat": 1, "stake": "10"}


@pytest.mark.parametrize(
    ("amount", "error", "words"),
    [
        ("1.0099999999", "decimal_max_places", "no more than 3 decimal places"),
        ("-1", "greater_than_equal", "greater than or equal to 0"),
        ("-0.5", "greater_than_equal", "greater than or equal to 0"),
        ("1e27", "decimal_max_digits", "no more than 12 digits"),
        ("1e-30", "decimal_max_digits", "no more than 12 digits"),
        ("9999999999999", "decimal_max_digits", "no more than 12 digits"),
    ],
)
async def test_a_side_bet_that_is_no_money_is_no_command_and_its_id_stays_free(
    broker: BrokerSettings, database: Database, table_id: str, amount: str, error: str, words: str
) -> None:
    async with controller_on_bus(broker, database, table_id) as (service, platform):
        await _open_betting(service, table_id)
        cid = "sb-rest"
        with pytest.raises(ValidationError) as refused:  # the REST API's 422
            await service.submit_command(
                table_id, {**BET, "id": cid, "side_bets": {"perfect_pairs": amount}}
            )
        (found,) = refused.value.errors(include_url=False, include_input=False)
        assert found["type"] == error
        assert found["loc"] == ("bet", "side_bets", "perfect_pairs")
        assert words in found["msg"]
        assert await service.commands.answer(table_id, cid) is None

        # On MQTT: a notice, the key not named, and no command_rejected.
        cid_mqtt = "sb-mqtt"
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await asyncio.wait_for(service.listening.wait(), 20)
            body = {**BET, "id": cid_mqtt, "side_bets": {"perfect_pairs": amount}}
            await platform.publish(Topics(table_id).game_commands, json.dumps(body))
            async with asyncio.timeout(10):
                notice: dict[str, Any] = (await sub.get()).payload.root
        assert (notice["id"], notice["type"]) == (cid_mqtt, "bet")
        assert notice["reason"].startswith("side_bets.<key>: ")
        assert words in notice["reason"]
        assert await service.commands.answer(table_id, cid_mqtt) is None

        # Both ids are free: the bets corrected are taken under them.
        for n, ident in enumerate((cid, cid_mqtt), start=1):
            fixed = {**BET, "id": ident, "seat": n, "side_bets": {"perfect_pairs": "1.00"}}
            answer = await service.submit_command(table_id, fixed)
            assert answer["accepted"] is True, answer
            assert answer["taken"]["side_bets"] == {"perfect_pairs": "1.00"}
        events = [o.payload for o in await service.log.read(table_id=table_id)]
        assert not [e for e in events if e.get("type") == "command_rejected"]


async def test_a_side_bet_of_0_or_none_is_still_no_side_bet(
    broker: BrokerSettings, database: Database, table_id: str
) -> None:
    async with controller_on_bus(broker, database, table_id) as (service, _):
        await _open_betting(service, table_id)
        for n, sides in enumerate(({"perfect_pairs": "0"}, {"perfect_pairs": 0}, {}), start=1):
            answer = await service.submit_command(
                table_id, {**BET, "id": f"z{n}", "seat": n, "side_bets": sides}
            )
            assert answer["accepted"] is True, answer
            assert answer["taken"] == {"stake": "10.00", "side_bets": {}}
        answer = await service.submit_command(
            table_id, {**BET, "id": "sb-ok", "seat": 4, "side_bets": {"perfect_pairs": "2.005"}}
        )
        assert answer["taken"]["side_bets"] == {"perfect_pairs": "2.00"}  # 3 decimals: rounded
        assert (await answered(service, table_id, "sb-ok"))["accepted"] is True


def test_a_logged_bet_replays_with_the_side_bets_it_was_taken_with() -> None:
    # A log written before the check holds such bets (refused or rounded by the table):
    # replayed, each is given to the table as it was, not refused as no command.
    from studio.controller.commands import logged_command

    for amount in ("-1", "1.0099999999", "1E+27"):
        logged = {**BET, "id": "old", "side_bets": {"perfect_pairs": amount}}
        command = logged_command.validate_python(logged)
        assert command.model_dump(mode="json")["side_bets"] == {"perfect_pairs": amount}
