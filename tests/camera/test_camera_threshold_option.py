"""``studio recognise --threshold`` takes a confidence, above 0 and at most 1.

Before, -1, 0, 1.5 and nan were taken: at 0 or below, a card whose reading was vetoed
(confidence 0.00) printed as that reading (``9S confidence 0.00``), and above 1 no card
was ever read."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from hwsim.camera.render import render_example_photo
from studio.cli import app

runner = CliRunner()


@pytest.mark.parametrize("value", ["-1", "0", "1.5", "nan", "inf"])
def test_a_threshold_outside_0_to_1_is_refused(tmp_path: Path, value: str) -> None:
    image = tmp_path / "card.png"
    cv2.imwrite(str(image), render_example_photo("9S", np.random.default_rng(1)))
    r = runner.invoke(app, ["recognise", "--threshold", value, str(image)])
    assert r.exit_code == 2, r.output
    assert "a confidence threshold is above 0 and at most 1" in r.output
    assert "Traceback" not in r.output


def test_a_threshold_of_1_is_taken(tmp_path: Path) -> None:
    image = tmp_path / "card.png"
    cv2.imwrite(str(image), render_example_photo("9S", np.random.default_rng(1)))
    r = runner.invoke(app, ["recognise", "--threshold", "1", str(image)])
    assert r.exit_code == 0, r.output
