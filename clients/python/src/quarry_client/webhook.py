"""Verifies a webhook delivery from Quarry (docs/webhooks.md).

Standard Webhooks signatures: an HMAC-SHA256 of ``{webhook-id}.{webhook-timestamp}.{body}`` keyed
with the endpoint's secret (``whsec_`` + base64), sent as space-separated ``v1,<base64>`` entries
(two during a secret rotation). Standard library only.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

__all__ = ["Webhook", "WebhookVerificationError"]

#: Deliveries older or newer than this many seconds are refused (a replayed capture).
TOLERANCE_SECONDS = 300


class WebhookVerificationError(Exception):
    """A delivery that is not Quarry's, or too old: do not act on it."""


def _header(headers: Mapping[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value if isinstance(value, str) else str(value)
    raise WebhookVerificationError(f"missing {name} header")


class Webhook:
    """``Webhook.verify(secret, body, headers)`` checks a delivery and returns its event."""

    @staticmethod
    def verify(
        secret: str,
        body: Union[str, bytes],
        headers: Mapping[str, Any],
        *,
        now: Optional[float] = None,
        tolerance_seconds: int = TOLERANCE_SECONDS,
    ) -> Any:
        """Returns the event (``{"type", "timestamp", "data"}``) of a genuine, recent delivery.

        Pass the raw body exactly as received. Raises :class:`WebhookVerificationError` otherwise.
        """
        raw = body.encode("utf-8") if isinstance(body, str) else body
        msg_id = _header(headers, "webhook-id")
        timestamp = _header(headers, "webhook-timestamp")
        signatures = _header(headers, "webhook-signature")
        if not timestamp.isdigit() or abs((time.time() if now is None else now) - int(timestamp)) > tolerance_seconds:
            raise WebhookVerificationError("the webhook-timestamp is missing or too far from now")
        key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
        signed = msg_id.encode("utf-8") + b"." + timestamp.encode("utf-8") + b"." + raw
        expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
        for entry in signatures.split(" "):
            version, _, signature = entry.partition(",")
            if version == "v1" and hmac.compare_digest(signature, expected):
                return json.loads(raw.decode("utf-8"))
        raise WebhookVerificationError("no signature matches this secret")
