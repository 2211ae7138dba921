"""A device's small state file: where its numbering was, so a restart continues it.

Consumers drop an event whose ``(device, seq)`` they have seen, so a driver or a
camera that started its numbering again after a restart would be ignored until it
caught up. Each keeps its last seq in ``STATE_DIR/{table}__{device}.json``, written
atomically (a crash leaves the old file or the new one, never half of one).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

_LOGGER = logging.getLogger(__name__)


class StateFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of_device(cls, state_dir: Path | None, table_id: str, device_id: str) -> StateFile | None:
        return cls(Path(state_dir) / f"{table_id}__{device_id}.json") if state_dir else None

    def load(self) -> dict[str, Any] | None:
        """The saved state; ``None`` when there is none or it cannot be read (logged)."""
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            _LOGGER.warning("ignoring unreadable state file %s: %s", self.path, exc)
            return None
        if not isinstance(data, dict):
            _LOGGER.warning("ignoring state file %s: not a JSON object", self.path)
            return None
        return data

    def save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")  # the CLI may write it too
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.path)
