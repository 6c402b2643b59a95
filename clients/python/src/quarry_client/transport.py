"""One HTTP call to the gateway with everything around it.

The credential (API key, or OAuth token fetched again once when the API answers 401), typed
errors, bounded retries with backoff, and one deadline for the whole call, retries and waits
included. Only the standard library: ``urllib.request`` and ``json``.
"""
from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from .errors import NetworkError, QuarryError, TimeoutError, error_from_response
from .oauth import TokenSource
from .retry import RetryPolicy, retry_delay

__all__ = ["ApiRequest", "Transport"]

Response = Tuple[int, Dict[str, str], bytes]


@dataclass
class ApiRequest:
    """One API call: ``path`` from the API root with segments already encoded."""

    method: str
    path: str
    query: Optional[Mapping[str, Any]] = None
    body: Any = None
    headers: Dict[str, str] = field(default_factory=dict)
    #: Safe to send more than once (GET, DELETE, a query with its Idempotency-Key).
    idempotent: bool = True


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # a redirect is an answer, not followed
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _query_string(query: Optional[Mapping[str, Any]]) -> str:
    """``k=v`` pairs; a list or tuple becomes repeated keys; None is left out; booleans are true/false."""
    pairs = []
    for name, value in (query or {}).items():
        if value is None:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            pairs.append((name, "true" if item is True else "false" if item is False else str(item)))
    return urllib.parse.urlencode(pairs)


def _send_http(method: str, url: str, body: Optional[bytes], headers: Mapping[str, str], timeout: float) -> Response:
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


class Transport:
    """Sends API calls for one client; thread-safe."""

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str],
        tokens: Optional[TokenSource],
        timeout: Optional[float],
        retry: RetryPolicy,
        user_agent: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._api_key = api_key
        self._tokens = tokens
        self._timeout = timeout
        self._retry = retry
        self._user_agent = user_agent
        self._sleep = sleep

    def raw(self, method: str, url: str, body: Optional[bytes], headers: Mapping[str, str], timeout: float) -> Response:
        """One HTTP exchange; no answer becomes NetworkError, a timed-out socket TimeoutError."""
        try:
            return _send_http(method, url, body, headers, max(timeout, 0.001))
        except (socket.timeout, TimeoutError) as error:
            raise TimeoutError("TIMEOUT", 0, f"{method} {url} did not answer within {timeout:.3g} s.") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, socket.timeout):
                raise TimeoutError("TIMEOUT", 0, f"{method} {url} did not answer within {timeout:.3g} s.") from error
            raise NetworkError("NETWORK_ERROR", 0, f"No answer from {self._base} ({method}): {error.reason}") from error
        except (OSError, http.client.HTTPException) as error:
            raise NetworkError("NETWORK_ERROR", 0, f"No answer from {self._base} ({method}): {error!r}") from error

    def send(self, request: ApiRequest) -> Any:
        """Sends ``request``; returns the parsed JSON body (None for 204) or raises a QuarryError."""
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        url = self._base + request.path
        qs = _query_string(request.query)
        if qs:
            url += "?" + qs
        last: Optional[QuarryError] = None
        reauthorized = False
        retry = 0
        while True:
            remaining = 3600.0 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    "TIMEOUT", 0, f"{request.method} {request.path} did not finish within {self._timeout} s."
                ) from last
            try:
                return self._attempt(request, url, remaining)
            except TimeoutError as error:
                raise TimeoutError(
                    "TIMEOUT", 0, f"{request.method} {request.path} did not finish within {self._timeout} s."
                ) from (last or error)
            except _TokenRefused as refused:
                if not reauthorized:
                    reauthorized = True
                    continue
                raise refused.original from None
            except QuarryError as error:
                last = error
                delay = retry_delay(error, retry, request.idempotent, self._retry)
                if delay is None or (deadline is not None and time.monotonic() + delay >= deadline):
                    raise
                self._sleep(delay)
                retry += 1

    def _attempt(self, request: ApiRequest, url: str, timeout: float) -> Any:
        headers = {"Accept": "application/json", "User-Agent": self._user_agent, **request.headers}
        body = None
        if request.body is not None:
            body = json.dumps(request.body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        token = self._api_key
        if self._tokens is not None:
            token = self._tokens.token(timeout)
        if token is not None:  # sign-up is the one call without a credential
            headers["Authorization"] = f"Bearer {token}"
        status, answer_headers, payload = self.raw(request.method, url, body, headers, timeout)
        if status == 401 and self._tokens is not None and token is not None:
            # The token may have been revoked or rotated early: one fresh token, then the API decides.
            self._tokens.invalidate(token)
            raise _TokenRefused(error_from_response(status, answer_headers, payload))
        if not 200 <= status < 300:
            raise error_from_response(status, answer_headers, payload)
        if status == 204 or not payload:
            return None
        try:
            return json.loads(payload.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as error:
            raise QuarryError(
                "INVALID_RESPONSE",
                status,
                f"The gateway answered {request.method} {request.path} with a body that is not JSON; check the base URL.",
                request_id=answer_headers.get("x-request-id"),
            ) from error


class _TokenRefused(Exception):
    """The API refused an OAuth token: fetch one fresh token, or raise ``original`` if that fails too."""

    def __init__(self, original: QuarryError) -> None:
        super().__init__(original.message)
        self.original = original
