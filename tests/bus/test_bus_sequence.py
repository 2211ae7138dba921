from studio.bus import SequenceTracker, SeqVerdict


def test_dedupe_and_gaps() -> None:
    tracker = SequenceTracker()
    assert tracker.observe("shoe", 1) is SeqVerdict.FRESH
    assert tracker.observe("shoe", 2) is SeqVerdict.FRESH
    assert tracker.observe("shoe", 2) is SeqVerdict.DUPLICATE
    assert tracker.observe("shoe", 5) is SeqVerdict.FRESH
    assert tracker.missing("shoe") == [3, 4]
    assert tracker.observe("shoe", 4) is SeqVerdict.FRESH
    assert tracker.observe("shoe", 3) is SeqVerdict.FRESH
    assert tracker.missing("shoe") == [] and tracker.last_contiguous("shoe") == 5
    assert tracker.observe("shoe", 5) is SeqVerdict.DUPLICATE


def test_joining_mid_stream_is_not_a_gap() -> None:
    tracker = SequenceTracker()
    tracker.observe("health", 1_764_000_000_000)
    assert tracker.missing("health") == []
    tracker.observe("health", 1_764_000_000_900)
    assert len(tracker.missing("health")) == 899
    tracker.observe("health", 1_764_999_000_000)
    assert len(tracker.missing("health")) == 999  # capped window of 1000, one of them seen


def test_restore_after_recovery_reports_what_was_missed() -> None:
    tracker = SequenceTracker()
    tracker.restore("shoe", 40)
    tracker.observe("shoe", 43)
    assert tracker.missing("shoe") == [41, 42]
    assert tracker.observe("shoe", 12) is SeqVerdict.DUPLICATE


def test_a_forgotten_seq_is_fresh_again_and_missing_until_then() -> None:
    tracker = SequenceTracker()
    tracker.observe("shoe", 1)
    tracker.observe("shoe", 2)
    tracker.forget("shoe", 2)  # the newest: missing though nothing above it was seen
    assert tracker.missing("shoe") == [2] and tracker.last_contiguous("shoe") == 1
    assert tracker.observe("shoe", 2) is SeqVerdict.FRESH
    assert tracker.missing("shoe") == [] and tracker.last_contiguous("shoe") == 2
    tracker.observe("shoe", 5)
    tracker.forget("shoe", 5)  # above a gap
    assert tracker.missing("shoe") == [3, 4, 5]
    tracker.observe("shoe", 3)
    tracker.observe("shoe", 4)
    tracker.forget("shoe", 3)  # below seqs already seen: they stay seen
    assert tracker.missing("shoe") == [3, 5]
    assert tracker.observe("shoe", 4) is SeqVerdict.DUPLICATE
    assert tracker.observe("shoe", 3) is SeqVerdict.FRESH
    assert tracker.last_contiguous("shoe") == 4


def test_forgetting_the_first_seq_of_a_source() -> None:
    tracker = SequenceTracker()
    tracker.observe("shoe", 40)  # joined mid-stream at 40
    tracker.forget("shoe", 40)
    assert tracker.missing("shoe") == [40]
    assert tracker.observe("shoe", 40) is SeqVerdict.FRESH
    tracker.forget("other", 3)  # never seen: nothing to forget
    assert tracker.sources() == ["shoe"]
