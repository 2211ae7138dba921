"""Errors of the rules engine; all derive from :class:`studio.errors.RuleError`."""

from __future__ import annotations

from studio.errors import RuleError


class RuleSetError(RuleError):
    """A rule set is invalid (unknown preset, bad field, impossible combination)."""


class CardNotDueError(RuleError):
    """A card arrived when none is due (waiting for a decision, round settled, ...)."""


class IllegalActionError(RuleError):
    """A decision that the rules do not allow right now."""


class WagerError(RuleError):
    """A wager cannot be placed: betting closed, limits, unknown seat, no main bet."""


class RoundStateError(RuleError):
    """The call does not fit the round's phase (settle before the dealer finished, ...)."""


class ReplayInputError(RuleError):
    """A replay file is malformed: wrong shape, unknown card, too few cards."""
