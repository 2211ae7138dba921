"""The project's one exception hierarchy.

Every error the studio raises on purpose derives from :class:`StudioError`, so a
command-line entry point can turn any of them into a clear message and a
non-zero exit without a traceback.
"""

from __future__ import annotations


class StudioError(Exception):
    """Base class of every error raised on purpose by the studio."""


class ConfigError(StudioError):
    """A configuration file or environment variable is invalid."""


class CardCodeError(StudioError, ValueError):
    """A card code such as ``QH`` or ``10H`` could not be parsed."""


class ProtocolError(StudioError):
    """Bytes or a payload on the wire do not follow the documented protocol."""


class BusError(StudioError):
    """The message bus could not do what was asked (not connected, bad topic)."""


class DeviceError(StudioError):
    """A device could not be opened or stopped answering."""


class RuleError(StudioError):
    """The rules engine refused an event: illegal action, card not due, bad rule set."""


class StoreError(StudioError):
    """The event log could not be read or written, or its chain is broken."""


class AppendUnconfirmed(StoreError):
    """An append's commit got no answer and the log could not be read to tell whether it
    committed: records ``first_id`` .. ``last_id`` (the last with ``last_hash``) may be in it."""

    def __init__(self, message: str, first_id: int, last_id: int, last_hash: str) -> None:
        super().__init__(message)
        self.first_id, self.last_id, self.last_hash = first_id, last_id, last_hash

    @property
    def records(self) -> tuple[int, int, str]:
        """``first_id``, ``last_id``, ``last_hash``: what :meth:`EventLog.holds` takes."""
        return self.first_id, self.last_id, self.last_hash


class VisionError(StudioError):
    """The camera pipeline could not read a frame, a profile or a calibration."""


class LockLost(StoreError):
    """The lock that made this process the one controller of its database was lost (its
    PostgreSQL connection dropped, its lock file removed) or taken over by another: it
    must stop writing at once."""
