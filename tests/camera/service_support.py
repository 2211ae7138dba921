"""What a camera service under test hands on (shared by the camera service tests).

out = ServiceOutputs()
CameraService(source, recogniser, out.publish, device="cam-1",
              on_availability=out.announce, on_health=out.report)
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
