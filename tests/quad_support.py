"""Helpers for camera tests that compare a found card's corners with the true ones."""

from __future__ import annotations

import numpy as np


def corner_error(fitted: np.ndarray, true: np.ndarray) -> float:
    """Largest distance from a true corner to the nearest fitted corner (pixels)."""
    return max(float(np.min(np.linalg.norm(fitted - c, axis=1))) for c in true)
