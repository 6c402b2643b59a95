"""What the gateway answers, as typed Python values.

Field names stay as on the wire. Row values keep their JSON types: a 64-bit integer or a
decimal the gateway sends as a string stays that exact string (convert it with ``int()`` or
``decimal.Decimal`` when you need to compute with it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Mapping, Optional

__all__ = ["Column", "QueryMeta", "QueryResult", "ApiKey"]


@dataclass(frozen=True)
class Column:
    """A result column and its type as the gateway reports it (``string``, ``integer``, ``decimal``, ``date`` …)."""

    __quarry_schema__: ClassVar[str] = "QueryResponse.columns[]"

    name: str
    type: str


@dataclass(frozen=True)
class QueryMeta:
    """What the gateway says about one served call."""

    __quarry_schema__: ClassVar[str] = "QueryResponse.meta"

    request_id: str
    #: Served from the gateway's result cache.
    cached: bool
    duration_ms: float
    row_count: int
    #: Rows past the analytic's ``max_rows`` were cut.
    truncated: bool
    #: Credits the call spent.
    credits: int
    #: The analytic version that answered.
    version: Optional[int] = None
    #: While the owner has a price rise scheduled: what a call will cost from ``next_price_at`` (ISO 8601).
    next_price: Optional[int] = None
    next_price_at: Optional[str] = None
    #: A marketplace preview (a try-token call): free, at most the gateway's preview rows.
    preview: Optional[bool] = None
    #: Pages only: rows in the whole result (``row_count`` is this page's).
    total_rows: Optional[int] = None
    #: Pages only: the index of this page's first row.
    offset: Optional[int] = None
    #: Pages only: the cursor of the next page, or None on the last one.
    next: Optional[str] = None
    #: Every field as sent, including ones this client does not know yet.
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class QueryResult:
    """A query's answer: rows, the owner-defined insights (None when the analytic has none), columns and meta."""

    __quarry_schema__: ClassVar[str] = "QueryResponse"

    source: str
    results: List[Dict[str, Any]]
    insights: Any
    columns: List[Column]
    meta: QueryMeta

    @staticmethod
    def from_json(body: Mapping[str, Any]) -> "QueryResult":
        """Builds a result from the gateway's JSON answer."""
        meta = body.get("meta") or {}
        return QueryResult(
            source=body.get("source", ""),
            results=list(body.get("results") or []),
            insights=body.get("insights"),
            columns=[Column(name=c["name"], type=c["type"]) for c in body.get("columns") or []],
            meta=QueryMeta(
                request_id=meta.get("request_id", ""),
                cached=bool(meta.get("cached", False)),
                duration_ms=meta.get("duration_ms", 0),
                row_count=meta.get("row_count", 0),
                truncated=bool(meta.get("truncated", False)),
                credits=meta.get("credits", 0),
                version=meta.get("version"),
                next_price=meta.get("next_price"),
                next_price_at=meta.get("next_price_at"),
                preview=meta.get("preview"),
                total_rows=meta.get("total_rows"),
                offset=meta.get("offset"),
                next=meta.get("next"),
                raw=dict(meta),
            ),
        )


@dataclass(frozen=True)
class ApiKey:
    """An API key. ``secret`` is set only on the answer to :meth:`Keys.create`, shown that once."""

    __quarry_schema__: ClassVar[tuple] = ("ApiKey", "IssuedApiKey")

    id: str
    name: str
    prefix: str
    scopes: List[str]
    created_at: str
    expires_at: Optional[str] = None
    revoked_at: Optional[str] = None
    last_used_at: Optional[str] = None
    secret: Optional[str] = None

    @staticmethod
    def from_json(body: Mapping[str, Any]) -> "ApiKey":
        """Builds a key from the gateway's JSON."""
        return ApiKey(
            id=body["id"],
            name=body["name"],
            prefix=body.get("prefix", ""),
            scopes=list(body.get("scopes") or []),
            created_at=body.get("created_at", ""),
            expires_at=body.get("expires_at"),
            revoked_at=body.get("revoked_at"),
            last_used_at=body.get("last_used_at"),
            secret=body.get("secret"),
        )
