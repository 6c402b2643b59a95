"""Access tokens for an OAuth client (client-credentials grant, ``POST /oauth/token``).

Fetched with HTTP Basic client authentication, cached, refreshed a little before they expire
(60 s, or a tenth of their life when that is shorter), dropped when the API refuses one, and
shared between threads: concurrent calls wait on one token request.
"""
from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Union

from .errors import OAuthError, error_from_response

__all__ = ["OAuthCredentials", "TokenSource"]

_MAX_REFRESH_MARGIN = 60.0
_DEFAULT_LIFETIME = 300.0


@dataclass(frozen=True)
class OAuthCredentials:
    """An OAuth client of your account (``POST /v1/oauth/clients`` shows the secret once).

    Attributes:
        client_id: the client's id (``qci_…``).
        client_secret: its secret (``qcs_…``).
        scope: scopes to ask for, space-separated or a list; None for all of the client's.
    """

    client_id: str
    client_secret: str
    scope: Optional[Union[str, Sequence[str]]] = None


#: Sends one token request: (url, form body, headers, timeout seconds) -> (status, headers, body).
TokenRequester = Callable[[str, bytes, dict, float], "tuple[int, dict, bytes]"]


class TokenSource:
    """Bearer tokens for one OAuth client; thread-safe."""

    def __init__(
        self,
        token_url: str,
        credentials: OAuthCredentials,
        send: TokenRequester,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = token_url
        self._send = send
        self._now = now
        quote = lambda v: urllib.parse.quote_plus(v)  # noqa: E731 - RFC 6749 §2.3.1
        pair = f"{quote(credentials.client_id)}:{quote(credentials.client_secret)}".encode()
        self._basic = "Basic " + base64.b64encode(pair).decode("ascii")
        scope = credentials.scope
        self._scope = scope if isinstance(scope, str) or scope is None else " ".join(scope)
        self._lock = threading.Lock()
        self._token: Optional[str] = None
        self._refresh_at = 0.0

    def token(self, timeout: float) -> str:
        """A token valid for a while yet: the cached one, or one fetched now."""
        with self._lock:
            if self._token is not None and self._now() < self._refresh_at:
                return self._token
            return self._fetch(timeout)

    def invalidate(self, token: str) -> None:
        """Forgets ``token`` (the API refused it), so the next :meth:`token` fetches a new one."""
        with self._lock:
            if self._token == token:
                self._token = None

    def _fetch(self, timeout: float) -> str:
        form = {"grant_type": "client_credentials"}
        if self._scope:
            form["scope"] = self._scope
        headers = {
            "Authorization": self._basic,
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        status, answer_headers, body = self._send(self._url, urllib.parse.urlencode(form).encode(), headers, timeout)
        if not 200 <= status < 300:
            raise error_from_response(status, answer_headers, body)
        try:
            decoded = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            decoded = None
        parsed: Dict[str, Any] = decoded if isinstance(decoded, dict) else {}
        token = parsed.get("access_token")
        token_type = parsed.get("token_type")
        if not isinstance(token, str) or not token or not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise OAuthError(
                code="invalid_token_response",
                status=status,
                message="The token endpoint answered without a bearer access_token; check the gateway URL.",
            )
        expires_in = parsed.get("expires_in")
        lifetime = (
            float(expires_in)
            if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0
            else _DEFAULT_LIFETIME
        )
        self._token = token
        self._refresh_at = self._now() + lifetime - min(_MAX_REFRESH_MARGIN, lifetime / 10)
        return token
