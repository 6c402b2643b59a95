"""When and how long the client waits before retrying a failed call.

Bounded attempts, exponential backoff with full jitter, never sooner than the gateway's
``retry_after``. The same policy as every official Quarry client.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional

from .errors import (
    NetworkError,
    QuarryError,
    RateLimitError,
    SourceUnavailableError,
    TimeoutError,
)

__all__ = ["RetryPolicy", "is_retryable", "retry_delay"]

_RETRYABLE_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How the client retries; ``retries=0`` turns retries off.

    Attributes:
        retries: retries after the first attempt.
        base_delay: the first backoff's upper bound in seconds; it doubles per retry.
        max_delay: the largest backoff in seconds. A ``retry_after`` longer than this is not
            waited out: the error is raised at once, with its ``retry_after``.
    """

    retries: int = 3
    base_delay: float = 0.25
    max_delay: float = 30.0


def is_retryable(error: QuarryError, idempotent: bool) -> bool:
    """Whether ``error`` may be retried.

    A rate-limited call was refused before any work, so it is retried whatever the call; an
    unavailable source, a network error and 502/503/504 only on idempotent calls. Never any
    other 4xx: not ``QUOTA_EXCEEDED`` (it resets monthly), nor the client's own timeout.
    """
    if isinstance(error, RateLimitError):
        return True
    if isinstance(error, TimeoutError) or not idempotent:
        return False
    return isinstance(error, (SourceUnavailableError, NetworkError)) or error.status in _RETRYABLE_STATUSES


def retry_delay(
    error: QuarryError,
    retry: int,
    idempotent: bool,
    policy: RetryPolicy,
    rand: Callable[[], float] = random.random,
) -> Optional[float]:
    """Seconds to wait before retry number ``retry`` (0 for the first), or None to raise instead.

    Full jitter up to ``base_delay * 2**retry`` (capped at ``max_delay``), added on top of
    ``retry_after``, so clients refused together do not come back together and none too early.
    """
    if retry >= policy.retries or not is_retryable(error, idempotent):
        return None
    floor = error.retry_after or 0.0
    if floor > policy.max_delay:
        return None
    cap = min(policy.max_delay, policy.base_delay * (2**retry))
    return floor + rand() * cap
