"""The topic of a controller start's numbering check marker is the contract's.

Each start publishes ``{}`` on a marker topic under every table and reads it back
(studio.controller.numbering): it comes after the retained ``round/state`` messages, so the
start knows it has them. A consumer's review found it spelled by hand in numbering.py and
missing from docs/protocol.md's topic table, which says every topic is built by
``studio.contract.Topics``; a game server subscribed to ``studio/v1/tables/+/#`` got it.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import Topics
from studio.controller.numbering import published_numbering

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def _documented_topics() -> list[re.Pattern[str]]:
    """The topic table's rows of docs/protocol.md, each placeholder one topic segment."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `studio/v1/"):
            topic = line.split("|")[1].strip().strip("`")
            rows.append(re.compile(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(topic)) + "$"))
    return rows


@pytest.mark.timeout(30)
async def test_the_start_marker_topic_is_built_by_topics_and_documented(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = f"nc{uuid.uuid4().hex[:8]}"
    broker = BrokerSettings(url="mqtt://127.0.0.1:1883", client_id_prefix=table)
    async with MessageBus(broker, "controller") as bus:
        published: list[str] = []
        publish = bus.publish

        async def spy(topic: str, payload: Any, **options: Any) -> None:
            published.append(topic)
            await publish(topic, payload, **options)

        monkeypatch.setattr(bus, "publish", spy)
        seen = await published_numbering(bus, [table], retained_wait=5.0)
    assert seen == {}, seen  # the marker came back, and the table has no retained state
    [marker] = published
    assert marker == Topics(table).numbering_check(marker.rsplit("/", 1)[1])
    assert any(row.match(marker) for row in _documented_topics()), marker
