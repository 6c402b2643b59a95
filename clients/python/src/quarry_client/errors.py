"""Errors of the Quarry client, mirroring the gateway's error envelope.

Every failed call raises a :class:`QuarryError` built from
``{"error": {"code", "message", "retry_after", "request_id", "details"}}``: one subclass per
family so callers can catch exactly what they handle, plus the client's own failures (network,
timeout) and the OAuth token endpoint's RFC 6749 errors.
"""
from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Type

__all__ = [
    "ErrorDetail",
    "QuarryError",
    "InvalidRequestError",
    "InvalidParamsError",
    "UnauthenticatedError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "PriceAboveLimitError",
    "RateLimitError",
    "QuotaExceededError",
    "ResultTooLargeError",
    "UpstreamError",
    "SourceUnavailableError",
    "QueryTimeoutError",
    "InternalError",
    "NetworkError",
    "TimeoutError",
    "OAuthError",
    "error_from_response",
]


@dataclass(frozen=True)
class ErrorDetail:
    """One item of an error's ``details``: the param or field and what is wrong with it."""

    __quarry_schema__: ClassVar[str] = "Error.error.details[]"

    message: str
    param: Optional[str] = None
    field: Optional[str] = None
    #: A number the error is about (QUOTA_EXCEEDED: the credits the call needs, those left).
    value: Optional[float] = None


class QuarryError(Exception):
    """Any failed call: an error answered by the gateway, or the client's own.

    Attributes:
        code: the envelope's code (``RATE_LIMIT_EXCEEDED`` …) or the client's own
            (``NETWORK_ERROR``, ``TIMEOUT``); for :class:`OAuthError` the OAuth error.
        status: the HTTP status, 0 when no response arrived.
        message: what went wrong, for people.
        request_id: the gateway's request id (quote it when reporting a problem).
        retry_after: seconds until a retry may succeed (fractional), or None.
        details: the per-param or per-field problems.
    """

    def __init__(
        self,
        code: str,
        status: int,
        message: str,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        details: Optional[List[ErrorDetail]] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.request_id = request_id
        self.retry_after = retry_after
        self.details: List[ErrorDetail] = list(details or [])

    def __str__(self) -> str:
        suffix = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.code}: {self.message}{suffix}"


class InvalidRequestError(QuarryError):
    """400 ``INVALID_REQUEST`` (and 405/413/415): the request itself is malformed."""


class InvalidParamsError(QuarryError):
    """400 ``INVALID_PARAMS``: ``details`` lists each param that is unknown, missing or wrong."""


class UnauthenticatedError(QuarryError):
    """401 ``UNAUTHENTICATED``: no, malformed, unknown, revoked or expired credential."""


class ForbiddenError(QuarryError):
    """403 ``FORBIDDEN``: the credential's scopes or the analytic's visibility forbid the call."""


class NotFoundError(QuarryError):
    """404 ``SOURCE_NOT_FOUND`` (an unknown analytic) or ``NOT_FOUND`` (another resource)."""


class ConflictError(QuarryError):
    """409 ``CONFLICT``: a duplicate name, or an Idempotency-Key still running."""


class PriceAboveLimitError(QuarryError):
    """409 ``PRICE_ABOVE_LIMIT``: the call would cost more than its ``max_credits``; nothing run or charged."""


class RateLimitError(QuarryError):
    """429 ``RATE_LIMIT_EXCEEDED``: retried automatically after ``retry_after`` seconds."""


class QuotaExceededError(QuarryError):
    """429 ``QUOTA_EXCEEDED``: the plan's monthly credits are used up; never retried."""


class ResultTooLargeError(QuarryError):
    """422 ``RESULT_TOO_LARGE``: the result is larger than the gateway answers; narrow the params."""


class UpstreamError(QuarryError):
    """502 ``UPSTREAM_ERROR``: the warehouse rejected or failed the query."""


class SourceUnavailableError(QuarryError):
    """503 ``SOURCE_UNAVAILABLE``: the warehouse is unreachable or busy."""


class QueryTimeoutError(QuarryError):
    """504 ``QUERY_TIMEOUT``: the analytic's own time limit passed on the gateway."""


class InternalError(QuarryError):
    """500 ``INTERNAL``: a bug in the gateway."""


class NetworkError(QuarryError):
    """No response: connection refused or reset, DNS failure, body cut off."""


class TimeoutError(QuarryError, builtins.TimeoutError):  # noqa: A001 - the family's name
    """The client's own overall timeout passed before the call (with its retries) finished.

    Also a builtin :class:`TimeoutError`, so ``except TimeoutError`` catches it either way.
    """


class OAuthError(QuarryError):
    """The OAuth token endpoint refused the client; ``code`` is the OAuth error (``invalid_client`` …)."""


_CLASS_BY_CODE: Dict[str, Type[QuarryError]] = {
    "INVALID_REQUEST": InvalidRequestError,
    "METHOD_NOT_ALLOWED": InvalidRequestError,
    "PAYLOAD_TOO_LARGE": InvalidRequestError,
    "UNSUPPORTED_MEDIA_TYPE": InvalidRequestError,
    "INVALID_PARAMS": InvalidParamsError,
    "UNAUTHENTICATED": UnauthenticatedError,
    "FORBIDDEN": ForbiddenError,
    "SOURCE_NOT_FOUND": NotFoundError,
    "NOT_FOUND": NotFoundError,
    "CONFLICT": ConflictError,
    "PRICE_ABOVE_LIMIT": PriceAboveLimitError,
    "RATE_LIMIT_EXCEEDED": RateLimitError,
    "QUOTA_EXCEEDED": QuotaExceededError,
    "RESULT_TOO_LARGE": ResultTooLargeError,
    "UPSTREAM_ERROR": UpstreamError,
    "SOURCE_UNAVAILABLE": SourceUnavailableError,
    "QUERY_TIMEOUT": QueryTimeoutError,
    "INTERNAL": InternalError,
}


#: Non-JSON answers of a proxy in front of the gateway.
_CLASS_BY_PROXY_STATUS: Dict[int, Type[QuarryError]] = {
    502: UpstreamError,
    503: SourceUnavailableError,
    504: UpstreamError,
}


def _retry_after_header(value: Optional[str]) -> Optional[float]:
    if value is None:
        return None
    try:
        return float(value.strip())
    except ValueError:
        return None


def _details(value: Any) -> List[ErrorDetail]:
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        if isinstance(item, dict):
            message = item.get("message")
            out.append(
                ErrorDetail(
                    message=message if isinstance(message, str) else json.dumps(item),
                    param=item.get("param") if isinstance(item.get("param"), str) else None,
                    field=item.get("field") if isinstance(item.get("field"), str) else None,
                    value=item.get("value") if isinstance(item.get("value"), (int, float)) and not isinstance(item.get("value"), bool) else None,
                )
            )
    return out


def error_from_response(status: int, headers: Mapping[str, str], body: bytes) -> QuarryError:
    """The typed error for a failed response: the envelope's family, an OAuthError, or a QuarryError."""
    try:
        parsed: Any = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        parsed = None
    header_retry = _retry_after_header(headers.get("retry-after"))
    header_request_id = headers.get("x-request-id")
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        e = parsed["error"]
        code = e.get("code")
        if isinstance(code, str):
            retry_after = e.get("retry_after")
            cls = _CLASS_BY_CODE.get(code, QuarryError)
            return cls(
                code=code,
                status=status,
                message=e["message"] if isinstance(e.get("message"), str) else f"{code} (HTTP {status})",
                request_id=e["request_id"] if isinstance(e.get("request_id"), str) else header_request_id,
                retry_after=float(retry_after)
                if isinstance(retry_after, (int, float)) and not isinstance(retry_after, bool)
                else header_retry,
                details=_details(e.get("details")),
            )
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
        description = parsed.get("error_description")
        return OAuthError(
            code=parsed["error"],
            status=status,
            message=description
            if isinstance(description, str) and description
            else f"The token endpoint answered {parsed['error']} (HTTP {status}).",
            request_id=header_request_id,
            retry_after=header_retry,
        )
    text = body[:200].decode("utf-8", "replace")
    # A proxy or load balancer in front of the gateway answers 502/503/504 with its own page:
    # the same family as the gateway's own upstream failure, so callers handle (and retry) it alike.
    cls = _CLASS_BY_PROXY_STATUS.get(status, QuarryError)
    where = " (from a proxy in front of the gateway)" if status in _CLASS_BY_PROXY_STATUS else ""
    return cls(
        code="HTTP_ERROR",
        status=status,
        message=f"HTTP {status} without a Quarry error body{where}" + (f": {text}" if text else ""),
        request_id=header_request_id,
        retry_after=header_retry,
    )
