"""Waiting after failures in a row: a few seconds after the first, doubling, up to a ceiling.

Two parts of ``memory`` retry, in the background, something that fails while the store goes on
answering: compaction (a full disk: ``memory.files.backend``) and the embedder (an endpoint
that is down: ``memory.embedding``). Both wait ``first`` seconds after a failure and twice as
long after each further one, ``most`` at the longest; and both log a run of failures once,
when it starts (``failed`` says so), and once when it ends (``recovered`` says after how many).
"""

from __future__ import annotations


class Backoff:
    """Failures in a row and when to try again (see the module docstring). Not thread-safe:
    its owner calls it under its own lock."""

    def __init__(self, first: float, most: float) -> None:
        self.first = first
        self.most = most
        self.failures = 0  # in a row
        self.retry_at = 0.0  # on the owner's clock: not tried again before it

    def failed(self, now: float) -> bool:
        """Count a failure at ``now``; whether it is the first of a run (to log)."""
        self.failures += 1
        self.retry_at = now + min(self.most, self.first * 2 ** min(self.failures - 1, 8))
        return self.failures == 1

    def recovered(self) -> int:
        """It worked: how many failures in a row that ends (0: none, nothing to log)."""
        failures, self.failures, self.retry_at = self.failures, 0, 0.0
        return failures
