"""Published RTP claims from the seeds are carried by the presets and printed beside the math."""

from __future__ import annotations

from decimal import Decimal

from typer.testing import CliRunner

from studio.cli import app
from studio.rules.paytables import SideBetKind
from studio.rules.ruleset import preset


def test_presets_carry_the_seeds_published_claims() -> None:
    assert preset("classic6").published_rtp == Decimal("99.27")
    majority = preset("majority_speed")
    assert majority.published_rtp == Decimal("99.54")
    assert majority.side_bets[SideBetKind.TWENTY_ONE_PLUS_THREE].published_rtp == Decimal("96.25")
    assert majority.side_bets[SideBetKind.BUSTER_BLACKJACK].published_rtp == Decimal("93.88")
    assert preset("clubhouse").published_rtp is None  # the seed's RTP section is empty


def test_rtp_report_prints_the_claim_beside_the_computed_figure() -> None:
    result = CliRunner().invoke(app, ["rtp", "-r", "majority_speed", "--side-bets"])
    assert result.exit_code == 0, result.output
    assert "published claim 96.25%   (computed 96.2961%)" in result.output
