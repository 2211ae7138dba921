"""What a camera service under test hands on (shared by the camera service tests).

out = ServiceOutputs()
CameraService(source, recogniser, out.publish, device="cam-1",
              on_availability=out.announce, on_health=out.report)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from studio.config import BrokerSettings
from studio.contract.messages import CameraCard


@dataclass
class ServiceOutputs:
    """The service's published cards, availability changes and health reports, in order."""

    cards: list[CameraCard] = field(default_factory=list)
    availability: list[bool] = field(default_factory=list)
    health: list[tuple[str, str]] = field(default_factory=list)  # (status, reason)

    async def publish(self, message: CameraCard) -> None:
        self.cards.append(message)

    async def announce(self, online: bool) -> None:
        self.availability.append(online)

    async def report(self, status: str, reason: str) -> None:
        self.health.append((status, reason))

    @property
    def statuses(self) -> list[str]:
        """The health reports' statuses alone."""
        return [status for status, _ in self.health]


def camera_base(cards: list[CameraCard]) -> int:
    """The seq a camera started from when a state file was configured but none was there
    (lost, or a first run): the Unix time in ms then, so that no seq an earlier run
    published is used again. Its first message is that + 1: relative seqs are 1, 2, 3..."""
    base = cards[0].seq - 1
    assert base > 1_600_000_000_000, base  # Unix ms, not 0
    return base


def camera_config(folder: Path, broker: BrokerSettings, table: str, options: str) -> Path:
    """``folder/studio.toml`` with one table and its camera ``cam-1`` (``options``: the
    inline table's contents), on the test's broker and client id prefix."""
    config = folder / "studio.toml"
    config.write_text(
        f"""
[broker]
url = "{broker.url}"
client_id_prefix = "{broker.client_id_prefix}"

[[tables]]
id = "{table}"

[[tables.devices]]
id = "cam-1"
kind = "camera"
options = {{ {options} }}
"""
    )
    return config
