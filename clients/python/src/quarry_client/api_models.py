"""The models of the API's answers, one class per OpenAPI schema (generated).

Written by test/support/client-surface/generate-models.ts from the served OpenAPI document;
run it again when the API changes. Field names stay as on the wire; every class keeps the
answer as sent in ``raw`` (fields this client does not know yet included).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Mapping, Optional

__all__ = ["Job", "JobError", "JobResult", "JobResultColumns", "JobResultMeta", "Jobs", "EmbedToken", "IssuedEmbedSecret", "EmbedSecret", "CorsSettings", "CorsSettingsCors", "Account", "Plan", "Connection", "Circuit", "ConnectionRemoval", "Analytic", "AnalyticHealth", "AnalyticDefinition", "CacheSettings", "Limits", "AnalyticVersion", "VersionDeprecation", "DeprecatedVersion", "ConnectorTypes", "ConnectorType", "Usage", "UsageTotals", "CallsByOrigin", "BudgetState", "UsageByAnalytic", "UsageByDay", "Calls", "Call", "Budget", "BudgetSettings", "IssuedWebhookEndpoint", "WebhookEndpoint", "WebhookDelivery", "AlertSettings", "AgentTool", "McpSettings", "McpDefaults", "Billing", "BillingPlan", "PaygInvoice", "PaygInvoiceLine", "Checkout", "Portal", "Onboarding", "PayoutAccount", "Payouts", "OwnerPayout", "Payout", "OwnerStatement", "StatementAnalytic", "StatementTotals", "StatementDay", "StatementPayout", "StatementAdjustment", "StatementFailedCalls", "OwnerListing", "Listing", "ListingOwner", "ListingDetail", "ExampleRequest", "ExampleRequestBody", "TryToken", "OAuthClient"]


@dataclass(frozen=True)
class Job:
    """What the API answers as Job."""

    __quarry_schema__: ClassVar[str] = "Job"

    id: str
    state: str
    source: str
    version: int
    #: The `X-Request-Id` of the submission
    request_id: str
    created_at: str
    #: Credits charged: the price once succeeded, else 0
    credits: int
    started_at: Optional[str] = None
    finished_at: Optional[str] = None
    #: A failed job's error, as the envelope's `error` would say it
    error: Optional["JobError"] = None
    row_count: Optional[int] = None
    truncated: Optional[bool] = None
    #: `pending` until it succeeded; `ready` with `result`; `unavailable` when this instance does not hold the result (another instance ran the job, or the result expired)
    result_status: Optional[str] = None
    #: A page of the result (GET /v1/jobs/{id} of a succeeded job)
    result: Optional["JobResult"] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Job":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            state=body.get("state"),
            source=body.get("source"),
            version=body.get("version"),
            request_id=body.get("request_id"),
            created_at=body.get("created_at"),
            credits=body.get("credits"),
            started_at=body.get("started_at"),
            finished_at=body.get("finished_at"),
            error=None if body.get("error") is None else JobError.from_json(body.get("error")),
            row_count=body.get("row_count"),
            truncated=body.get("truncated"),
            result_status=body.get("result_status"),
            result=None if body.get("result") is None else JobResult.from_json(body.get("result")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class JobError:
    """A failed job's error, as the envelope's `error` would say it"""

    __quarry_schema__: ClassVar[str] = "Job.error"

    code: str
    message: str
    details: List[Any]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "JobError":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            code=body.get("code"),
            message=body.get("message"),
            details=None if body.get("details") is None else list(body.get("details")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class JobResult:
    """A page of the result (GET /v1/jobs/{id} of a succeeded job)"""

    __quarry_schema__: ClassVar[str] = "Job.result"

    results: List[Dict[str, Any]]
    columns: List["JobResultColumns"]
    meta: "JobResultMeta"
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "JobResult":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            results=None if body.get("results") is None else list(body.get("results")),
            columns=None if body.get("columns") is None else [JobResultColumns.from_json(item) for item in body.get("columns")],
            meta=None if body.get("meta") is None else JobResultMeta.from_json(body.get("meta")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class JobResultColumns:
    """`result.columns[]` of Job."""

    __quarry_schema__: ClassVar[str] = "Job.result.columns[]"

    name: str
    type: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "JobResultColumns":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            name=body.get("name"),
            type=body.get("type"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class JobResultMeta:
    """`result.meta` of Job."""

    __quarry_schema__: ClassVar[str] = "Job.result.meta"

    row_count: int
    total_rows: int
    offset: int
    #: The cursor of the next page, or null
    next: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "JobResultMeta":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            row_count=body.get("row_count"),
            total_rows=body.get("total_rows"),
            offset=body.get("offset"),
            next=body.get("next"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Jobs:
    """What the API answers as Jobs."""

    __quarry_schema__: ClassVar[str] = "Jobs"

    items: List["Job"]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Jobs":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            items=None if body.get("items") is None else [Job.from_json(item) for item in body.get("items")],
            raw=dict(body),
        )


@dataclass(frozen=True)
class EmbedToken:
    """What the API answers as EmbedToken."""

    __quarry_schema__: ClassVar[str] = "EmbedToken"

    #: The JWT a page sends as `Authorization: Bearer <token>`
    token: str
    token_id: str
    expires_at: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "EmbedToken":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            token=body.get("token"),
            token_id=body.get("token_id"),
            expires_at=body.get("expires_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class IssuedEmbedSecret:
    """What the API answers as IssuedEmbedSecret."""

    __quarry_schema__: ClassVar[str] = "IssuedEmbedSecret"

    #: The `kid` of the tokens it signs
    id: str
    name: str
    created_at: str
    #: The HS256 key (its UTF-8 bytes), shown this once
    secret: str
    #: Set by a rotation: it verifies tokens until then
    expires_at: Optional[str] = None
    revoked_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "IssuedEmbedSecret":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            name=body.get("name"),
            created_at=body.get("created_at"),
            secret=body.get("secret"),
            expires_at=body.get("expires_at"),
            revoked_at=body.get("revoked_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class EmbedSecret:
    """What the API answers as EmbedSecret."""

    __quarry_schema__: ClassVar[str] = "EmbedSecret"

    #: The `kid` of the tokens it signs
    id: str
    name: str
    created_at: str
    #: Set by a rotation: it verifies tokens until then
    expires_at: Optional[str] = None
    revoked_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "EmbedSecret":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            name=body.get("name"),
            created_at=body.get("created_at"),
            expires_at=body.get("expires_at"),
            revoked_at=body.get("revoked_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class CorsSettings:
    """What the API answers as CorsSettings."""

    __quarry_schema__: ClassVar[str] = "CorsSettings"

    cors: "CorsSettingsCors"
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "CorsSettings":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            cors=None if body.get("cors") is None else CorsSettingsCors.from_json(body.get("cors")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class CorsSettingsCors:
    """`cors` of CorsSettings."""

    __quarry_schema__: ClassVar[str] = "CorsSettings.cors"

    #: Whether the account's API keys and OAuth tokens are accepted from web pages of other origins (off: only embed tokens are)
    allow_keys_from_browsers: bool
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "CorsSettingsCors":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            allow_keys_from_browsers=body.get("allow_keys_from_browsers"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Account:
    """What the API answers as Account."""

    __quarry_schema__: ClassVar[str] = "Account"

    id: str
    email: str
    name: str
    plan: str
    created_at: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Account":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            email=body.get("email"),
            name=body.get("name"),
            plan=body.get("plan"),
            created_at=body.get("created_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Plan:
    """What the API answers as Plan."""

    __quarry_schema__: ClassVar[str] = "Plan"

    id: str
    name: str
    monthly_price_cents: int
    #: Pay as you Go: the price of a credit, in cents (old name of `credit_price_cents`)
    per_call_cents: int
    #: Pay as you Go: the price of a credit, in cents
    credit_price_cents: int
    #: What one credit costs on this plan: price ÷ included credits (Free: 0)
    credit_value_usd: float
    #: Old name of `included_credits` (calls at 1 credit each)
    included_calls: Optional[int] = None
    #: Credits included a month; null: Pay as you Go
    included_credits: Optional[int] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Plan":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            name=body.get("name"),
            monthly_price_cents=body.get("monthly_price_cents"),
            per_call_cents=body.get("per_call_cents"),
            credit_price_cents=body.get("credit_price_cents"),
            credit_value_usd=body.get("credit_value_usd"),
            included_calls=body.get("included_calls"),
            included_credits=body.get("included_credits"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Connection:
    """What the API answers as Connection."""

    __quarry_schema__: ClassVar[str] = "Connection"

    id: str
    name: str
    type: str
    #: Non-secret settings
    config: Dict[str, Any]
    #: Stored encrypted; never returned
    secret_fields: List[str]
    created_at: str
    updated_at: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Connection":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            name=body.get("name"),
            type=body.get("type"),
            config=body.get("config"),
            secret_fields=None if body.get("secret_fields") is None else list(body.get("secret_fields")),
            created_at=body.get("created_at"),
            updated_at=body.get("updated_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Circuit:
    """What the API answers as Circuit."""

    __quarry_schema__: ClassVar[str] = "Circuit"

    #: closed: calls reach the warehouse; open: after repeated warehouse faults (unreachable, lost sessions, time limits) calls fail fast with 503 SOURCE_UNAVAILABLE until the probe; half_open: one call is probing
    state: str
    consecutive_failures: int
    #: Seconds until the probe (open only)
    retry_after: Optional[float] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Circuit":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            state=body.get("state"),
            consecutive_failures=body.get("consecutive_failures"),
            retry_after=body.get("retry_after"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class ConnectionRemoval:
    """What the API answers as ConnectionRemoval."""

    __quarry_schema__: ClassVar[str] = "ConnectionRemoval"

    #: The connection's id
    deleted: str
    #: Your analytics that were on it: they answer 404 until deployed on another connection
    analytics: List[str]
    #: Those of them taken off the marketplace
    unlisted: List[str]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "ConnectionRemoval":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            deleted=body.get("deleted"),
            analytics=None if body.get("analytics") is None else list(body.get("analytics")),
            unlisted=None if body.get("unlisted") is None else list(body.get("unlisted")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Analytic:
    """What the API answers as Analytic."""

    __quarry_schema__: ClassVar[str] = "Analytic"

    id: str
    name: str
    version: int
    current_version: int
    visibility: str
    shared_with: List[str]
    definition: Dict[str, Any]
    #: Credits a call pays now. A rise waits QUARRY_PRICE_NOTICE_HOURS (default 168) after the deploy that raised it; a decrease applies at once
    price: int
    created_at: str
    updated_at: str
    #: The price a deploy raised it to, not in force yet; null when none
    scheduled_price: Optional[int] = None
    #: When `scheduled_price` takes effect (ISO 8601); null when none
    price_effective_at: Optional[str] = None
    health: Optional["AnalyticHealth"] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Analytic":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            name=body.get("name"),
            version=body.get("version"),
            current_version=body.get("current_version"),
            visibility=body.get("visibility"),
            shared_with=None if body.get("shared_with") is None else list(body.get("shared_with")),
            definition=body.get("definition"),
            price=body.get("price"),
            created_at=body.get("created_at"),
            updated_at=body.get("updated_at"),
            scheduled_price=body.get("scheduled_price"),
            price_effective_at=body.get("price_effective_at"),
            health=None if body.get("health") is None else AnalyticHealth.from_json(body.get("health")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class AnalyticHealth:
    """Only on `GET /v1/owner/analytics` and `GET /v1/owner/analytics/{name}`: whether the analytic is failing"""

    __quarry_schema__: ClassVar[str] = "AnalyticHealth"

    #: `failing`: more than the owner's `error_rate_percent` (PUT /v1/account/alerts) of its warehouse queries failed over 5 minutes; `ok` again once it is back at or under it
    state: str
    #: When it turned failing or recovered (ISO 8601); null when it never failed
    since: Optional[str] = None
    #: Its error rate over the 5 minutes when it changed state; null when it never failed
    error_rate_percent: Optional[float] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "AnalyticHealth":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            state=body.get("state"),
            since=body.get("since"),
            error_rate_percent=body.get("error_rate_percent"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class AnalyticDefinition:
    """What the API answers as AnalyticDefinition."""

    __quarry_schema__: ClassVar[str] = "AnalyticDefinition"

    name: str
    connection: str
    sql: str
    title: Optional[str] = None
    description: Optional[str] = None
    category: Optional[str] = None
    tags: Optional[List[str]] = None
    params: Optional[Dict[str, Any]] = None
    insights: Optional[Any] = None
    cache: Optional["CacheSettings"] = None
    limits: Optional["Limits"] = None
    price: Optional[int] = None
    visibility: Optional[str] = None
    shared_with: Optional[List[str]] = None
    example_params: Optional[Dict[str, Any]] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "AnalyticDefinition":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            name=body.get("name"),
            connection=body.get("connection"),
            sql=body.get("sql"),
            title=body.get("title"),
            description=body.get("description"),
            category=body.get("category"),
            tags=None if body.get("tags") is None else list(body.get("tags")),
            params=body.get("params"),
            insights=body.get("insights"),
            cache=None if body.get("cache") is None else CacheSettings.from_json(body.get("cache")),
            limits=None if body.get("limits") is None else Limits.from_json(body.get("limits")),
            price=body.get("price"),
            visibility=body.get("visibility"),
            shared_with=None if body.get("shared_with") is None else list(body.get("shared_with")),
            example_params=body.get("example_params"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class CacheSettings:
    """`cache` of AnalyticDefinition."""

    __quarry_schema__: ClassVar[str] = "AnalyticDefinition.cache"

    ttl: Optional[int] = None
    stale: Optional[int] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "CacheSettings":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            ttl=body.get("ttl"),
            stale=body.get("stale"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Limits:
    """`limits` of AnalyticDefinition."""

    __quarry_schema__: ClassVar[str] = "AnalyticDefinition.limits"

    timeout_ms: Optional[int] = None
    async_timeout_ms: Optional[int] = None
    max_rows: Optional[int] = None
    max_bytes_billed: Optional[int] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Limits":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            timeout_ms=body.get("timeout_ms"),
            async_timeout_ms=body.get("async_timeout_ms"),
            max_rows=body.get("max_rows"),
            max_bytes_billed=body.get("max_bytes_billed"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class AnalyticVersion:
    """What the API answers as AnalyticVersion."""

    __quarry_schema__: ClassVar[str] = "AnalyticVersion"

    version: int
    #: Credits a call of this version (`name@N`) pays now
    price: int
    created_at: str
    definition: Optional[Any] = None
    scheduled_price: Optional[int] = None
    price_effective_at: Optional[str] = None
    deprecation: Optional["VersionDeprecation"] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "AnalyticVersion":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            version=body.get("version"),
            price=body.get("price"),
            created_at=body.get("created_at"),
            definition=body.get("definition"),
            scheduled_price=body.get("scheduled_price"),
            price_effective_at=body.get("price_effective_at"),
            deprecation=None if body.get("deprecation") is None else VersionDeprecation.from_json(body.get("deprecation")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class VersionDeprecation:
    """Its deprecation, or null"""

    __quarry_schema__: ClassVar[str] = "VersionDeprecation"

    #: When its owner deprecated it (ISO 8601; the `Deprecation` header)
    deprecated_at: str
    #: From then on calls of it are refused with 410 `VERSION_SUNSET` (ISO 8601; the `Sunset` header)
    sunset: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "VersionDeprecation":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            deprecated_at=body.get("deprecated_at"),
            sunset=body.get("sunset"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class DeprecatedVersion:
    """What the API answers as DeprecatedVersion."""

    __quarry_schema__: ClassVar[str] = "DeprecatedVersion"

    #: When its owner deprecated it (ISO 8601; the `Deprecation` header)
    deprecated_at: str
    #: From then on calls of it are refused with 410 `VERSION_SUNSET` (ISO 8601; the `Sunset` header)
    sunset: str
    analytic: str
    version: int
    #: The version to move to
    current_version: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "DeprecatedVersion":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            deprecated_at=body.get("deprecated_at"),
            sunset=body.get("sunset"),
            analytic=body.get("analytic"),
            version=body.get("version"),
            current_version=body.get("current_version"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class ConnectorTypes:
    """What the API answers as ConnectorTypes."""

    __quarry_schema__: ClassVar[str] = "ConnectorTypes"

    connectors: List["ConnectorType"]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "ConnectorTypes":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            connectors=None if body.get("connectors") is None else [ConnectorType.from_json(item) for item in body.get("connectors")],
            raw=dict(body),
        )


@dataclass(frozen=True)
class ConnectorType:
    """`connectors[]` of ConnectorTypes."""

    __quarry_schema__: ClassVar[str] = "ConnectorTypes.connectors[]"

    type: str
    display_name: str
    secret_fields: List[str]
    #: The connection config's JSON Schema (input side). Each field may carry `ui`, form hints its connector declares: `label`, `help`, `placeholder`, `secret` (mask it), `advanced`, `order`, `input` (text, textarea, number, checkbox, select, list, map, url, json) and `options` ({value, label}) for a select; on a union, each variant's `ui.label` names that way of configuring.
    config_schema: Optional[Any] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "ConnectorType":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            type=body.get("type"),
            display_name=body.get("display_name"),
            secret_fields=None if body.get("secret_fields") is None else list(body.get("secret_fields")),
            config_schema=body.get("config_schema"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Usage:
    """What the API answers as Usage."""

    __quarry_schema__: ClassVar[str] = "Usage"

    period: str
    plan: "Plan"
    totals: "UsageTotals"
    by_analytic: List["UsageByAnalytic"]
    by_day: List["UsageByDay"]
    #: Versions you called by version (`name@N`) in the last 30 days that their owner deprecated, soonest sunset first: move to `current_version` before `sunset`
    deprecated_versions: List["DeprecatedVersion"]
    budget: Optional["BudgetState"] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Usage":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            period=body.get("period"),
            plan=None if body.get("plan") is None else Plan.from_json(body.get("plan")),
            totals=None if body.get("totals") is None else UsageTotals.from_json(body.get("totals")),
            by_analytic=None if body.get("by_analytic") is None else [UsageByAnalytic.from_json(item) for item in body.get("by_analytic")],
            by_day=None if body.get("by_day") is None else [UsageByDay.from_json(item) for item in body.get("by_day")],
            deprecated_versions=None if body.get("deprecated_versions") is None else [DeprecatedVersion.from_json(item) for item in body.get("deprecated_versions")],
            budget=None if body.get("budget") is None else BudgetState.from_json(body.get("budget")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class UsageTotals:
    """`totals` of Usage."""

    __quarry_schema__: ClassVar[str] = "Usage.totals"

    #: Served calls that spent credits (failed calls are never counted)
    calls: int
    calls_by_origin: "CallsByOrigin"
    #: Credits spent by served calls (same as `credits_used`)
    credits: float
    credits_used: float
    #: Free marketplace previews (not in `calls`)
    marketplace_calls: int
    #: Subscription price, or Pay as you Go: the credits spent × their price
    amount_due_usd: float
    amount_due_micro_usd: int
    #: `amount_due_usd` in cents, rounded up
    amount_due_cents: int
    #: Credits a call can still spend this period (calls in flight counted): what the plan leaves, or what the Pay as you Go budget still buys
    credits_left: Optional[int] = None
    #: `credits_left`, kept under its old name (calls of 1 credit)
    remaining_calls: Optional[int] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "UsageTotals":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            calls=body.get("calls"),
            calls_by_origin=None if body.get("calls_by_origin") is None else CallsByOrigin.from_json(body.get("calls_by_origin")),
            credits=body.get("credits"),
            credits_used=body.get("credits_used"),
            marketplace_calls=body.get("marketplace_calls"),
            amount_due_usd=body.get("amount_due_usd"),
            amount_due_micro_usd=body.get("amount_due_micro_usd"),
            amount_due_cents=body.get("amount_due_cents"),
            credits_left=body.get("credits_left"),
            remaining_calls=body.get("remaining_calls"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class CallsByOrigin:
    """What the API answers as CallsByOrigin."""

    __quarry_schema__: ClassVar[str] = "CallsByOrigin"

    #: Calls that spent paid credits
    paid: int
    #: Calls that spent Free-plan credits (worth 0 USD)
    free: int
    #: Marketplace previews (try-tokens): 0 credits
    marketplace: int
    #: An owner's calls of its own analytics: free, earn nothing
    owner: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "CallsByOrigin":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            paid=body.get("paid"),
            free=body.get("free"),
            marketplace=body.get("marketplace"),
            owner=body.get("owner"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class BudgetState:
    """Pay as you Go only"""

    __quarry_schema__: ClassVar[str] = "BudgetState"

    budget_usd: float
    #: This period, calls in flight included
    spent_usd: float
    left_usd: float
    budget_micro_usd: int
    spent_micro_usd: int
    left_micro_usd: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "BudgetState":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            budget_usd=body.get("budget_usd"),
            spent_usd=body.get("spent_usd"),
            left_usd=body.get("left_usd"),
            budget_micro_usd=body.get("budget_micro_usd"),
            spent_micro_usd=body.get("spent_micro_usd"),
            left_micro_usd=body.get("left_micro_usd"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class UsageByAnalytic:
    """`by_analytic[]` of Usage."""

    __quarry_schema__: ClassVar[str] = "Usage.by_analytic[]"

    calls: int
    #: Credits spent
    credits: float
    #: What those credits cost the account, in USD
    value_usd: float
    name: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "UsageByAnalytic":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            calls=body.get("calls"),
            credits=body.get("credits"),
            value_usd=body.get("value_usd"),
            name=body.get("name"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class UsageByDay:
    """`by_day[]` of Usage."""

    __quarry_schema__: ClassVar[str] = "Usage.by_day[]"

    calls: int
    #: Credits spent
    credits: float
    #: What those credits cost the account, in USD
    value_usd: float
    #: YYYY-MM-DD, UTC
    date: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "UsageByDay":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            calls=body.get("calls"),
            credits=body.get("credits"),
            value_usd=body.get("value_usd"),
            date=body.get("date"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Calls:
    """What the API answers as Calls."""

    __quarry_schema__: ClassVar[str] = "Calls"

    items: List["Call"]
    #: Pass as `cursor` for older calls; null: no more
    next_cursor: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Calls":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            items=None if body.get("items") is None else [Call.from_json(item) for item in body.get("items")],
            next_cursor=body.get("next_cursor"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Call:
    """What the API answers as Call."""

    __quarry_schema__: ClassVar[str] = "Call"

    #: The `X-Request-Id` the call was answered with
    request_id: str
    analytic: str
    #: `ok`, or the error code the caller got
    status: str
    #: Credits charged (failed calls are free: 0)
    credits: float
    #: When the call came in (served) or failed, ISO 8601 UTC
    at: str
    #: The version that served the call (null: not recorded for failed calls)
    version: Optional[int] = None
    #: The error code; null for a served call
    error_code: Optional[str] = None
    #: Served: the call’s latency; failed: how long it waited on the warehouse
    latency_ms: Optional[float] = None
    #: How a served call was counted (null for failed calls)
    origin: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Call":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            request_id=body.get("request_id"),
            analytic=body.get("analytic"),
            status=body.get("status"),
            credits=body.get("credits"),
            at=body.get("at"),
            version=body.get("version"),
            error_code=body.get("error_code"),
            latency_ms=body.get("latency_ms"),
            origin=body.get("origin"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Budget:
    """What the API answers as Budget."""

    __quarry_schema__: ClassVar[str] = "Budget"

    budget: "BudgetSettings"
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Budget":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            budget=None if body.get("budget") is None else BudgetSettings.from_json(body.get("budget")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class BudgetSettings:
    """`budget` of Budget."""

    __quarry_schema__: ClassVar[str] = "Budget.budget"

    budget_usd: float
    #: This period, calls in flight included
    spent_usd: float
    left_usd: float
    budget_micro_usd: int
    spent_micro_usd: int
    left_micro_usd: int
    #: The current billing period (UTC month)
    period: str
    #: false: the gateway’s default budget
    custom: bool
    #: The operator’s cap
    max_budget_usd: float
    #: Whether the account’s plan is Pay as you Go (others stop at their credits)
    applies: bool
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "BudgetSettings":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            budget_usd=body.get("budget_usd"),
            spent_usd=body.get("spent_usd"),
            left_usd=body.get("left_usd"),
            budget_micro_usd=body.get("budget_micro_usd"),
            spent_micro_usd=body.get("spent_micro_usd"),
            left_micro_usd=body.get("left_micro_usd"),
            period=body.get("period"),
            custom=body.get("custom"),
            max_budget_usd=body.get("max_budget_usd"),
            applies=body.get("applies"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class IssuedWebhookEndpoint:
    """What the API answers as IssuedWebhookEndpoint."""

    __quarry_schema__: ClassVar[str] = "IssuedWebhookEndpoint"

    endpoint: "WebhookEndpoint"
    #: The signing secret (`whsec_…`), shown this once
    secret: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "IssuedWebhookEndpoint":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            endpoint=None if body.get("endpoint") is None else WebhookEndpoint.from_json(body.get("endpoint")),
            secret=body.get("secret"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class WebhookEndpoint:
    """What the API answers as WebhookEndpoint."""

    __quarry_schema__: ClassVar[str] = "WebhookEndpoint"

    id: str
    url: str
    description: str
    event_types: List[str]
    enabled: bool
    created_at: str
    updated_at: str
    disabled_reason: Optional[str] = None
    failing_since: Optional[str] = None
    #: While set, deliveries carry both signatures
    previous_secret_until: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "WebhookEndpoint":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            url=body.get("url"),
            description=body.get("description"),
            event_types=None if body.get("event_types") is None else list(body.get("event_types")),
            enabled=body.get("enabled"),
            created_at=body.get("created_at"),
            updated_at=body.get("updated_at"),
            disabled_reason=body.get("disabled_reason"),
            failing_since=body.get("failing_since"),
            previous_secret_until=body.get("previous_secret_until"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class WebhookDelivery:
    """What the API answers as WebhookDelivery."""

    __quarry_schema__: ClassVar[str] = "WebhookDelivery"

    id: str
    #: The `webhook-id` header: the same on every attempt
    event_id: str
    type: str
    status: str
    attempts: int
    created_at: str
    last_status: Optional[int] = None
    last_error: Optional[str] = None
    last_latency_ms: Optional[float] = None
    next_attempt_at: Optional[str] = None
    delivered_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "WebhookDelivery":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            event_id=body.get("event_id"),
            type=body.get("type"),
            status=body.get("status"),
            attempts=body.get("attempts"),
            created_at=body.get("created_at"),
            last_status=body.get("last_status"),
            last_error=body.get("last_error"),
            last_latency_ms=body.get("last_latency_ms"),
            next_attempt_at=body.get("next_attempt_at"),
            delivered_at=body.get("delivered_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class AlertSettings:
    """What the API answers as AlertSettings."""

    __quarry_schema__: ClassVar[str] = "AlertSettings"

    #: Percent of the month's credits (Pay as you Go: of the budget)
    usage_thresholds: List[int]
    #: An analytic failing more than this share of its calls over 5 minutes is failing
    error_rate_percent: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "AlertSettings":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            usage_thresholds=None if body.get("usage_thresholds") is None else list(body.get("usage_thresholds")),
            error_rate_percent=body.get("error_rate_percent"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class AgentTool:
    """What the API answers as AgentTool."""

    __quarry_schema__: ClassVar[str] = "AgentTool"

    #: The analytic, and the MCP tool’s name
    name: str
    #: Its listing’s (or definition’s) title: owner text
    title: str
    owner_id: str
    #: true: the account’s own analytic (always a tool)
    owned: bool
    #: Whether it is published on the marketplace
    listed: bool
    #: Credits a call pays now
    price: int
    scheduled_price: Optional[int] = None
    price_effective_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "AgentTool":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            name=body.get("name"),
            title=body.get("title"),
            owner_id=body.get("owner_id"),
            owned=body.get("owned"),
            listed=body.get("listed"),
            price=body.get("price"),
            scheduled_price=body.get("scheduled_price"),
            price_effective_at=body.get("price_effective_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class McpSettings:
    """What the API answers as McpSettings."""

    __quarry_schema__: ClassVar[str] = "McpSettings"

    mcp: "McpDefaults"
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "McpSettings":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            mcp=None if body.get("mcp") is None else McpDefaults.from_json(body.get("mcp")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class McpDefaults:
    """`mcp` of McpSettings."""

    __quarry_schema__: ClassVar[str] = "McpSettings.mcp"

    #: The price limit of an MCP tool call without a `max_credits` argument; null: none
    max_credits: Optional[int] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "McpDefaults":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            max_credits=body.get("max_credits"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Billing:
    """What the API answers as Billing."""

    __quarry_schema__: ClassVar[str] = "Billing"

    #: Who takes payments: `none` (the operator sets plans), `sandbox` (no money moves), `stripe`
    provider: str
    plan: "Plan"
    #: The subscription's standing: `past_due` keeps the plan until `grace_ends_at`, then the account is on Free
    status: str
    cancel_at_period_end: bool
    card_on_file: bool
    #: Whether POST /v1/billing/portal has a portal to open
    portal: bool
    plans: List["BillingPlan"]
    #: Pay as you Go invoices, newest first
    invoices: List["PaygInvoice"]
    current_period_end: Optional[str] = None
    #: A downgrade or cancel, applied at `pending_at` (the paid period’s end)
    pending_plan: Optional[str] = None
    pending_at: Optional[str] = None
    grace_ends_at: Optional[str] = None
    budget: Optional["BudgetState"] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Billing":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            provider=body.get("provider"),
            plan=None if body.get("plan") is None else Plan.from_json(body.get("plan")),
            status=body.get("status"),
            cancel_at_period_end=body.get("cancel_at_period_end"),
            card_on_file=body.get("card_on_file"),
            portal=body.get("portal"),
            plans=None if body.get("plans") is None else [BillingPlan.from_json(item) for item in body.get("plans")],
            invoices=None if body.get("invoices") is None else [PaygInvoice.from_json(item) for item in body.get("invoices")],
            current_period_end=body.get("current_period_end"),
            pending_plan=body.get("pending_plan"),
            pending_at=body.get("pending_at"),
            grace_ends_at=body.get("grace_ends_at"),
            budget=None if body.get("budget") is None else BudgetState.from_json(body.get("budget")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class BillingPlan:
    """`plans[]` of Billing."""

    __quarry_schema__: ClassVar[str] = "Billing.plans[]"

    id: str
    name: str
    monthly_price_cents: int
    #: Pay as you Go: the price of a credit, in cents (old name of `credit_price_cents`)
    per_call_cents: int
    #: Pay as you Go: the price of a credit, in cents
    credit_price_cents: int
    #: What one credit costs on this plan: price ÷ included credits (Free: 0)
    credit_value_usd: float
    current: bool
    #: Old name of `included_credits` (calls at 1 credit each)
    included_calls: Optional[int] = None
    #: Credits included a month; null: Pay as you Go
    included_credits: Optional[int] = None
    #: What buying it means: `upgrade` (at once), `downgrade` (through the portal, at the period’s end), `add_card` (Pay as you Go), null (nothing to buy here)
    action: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "BillingPlan":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            name=body.get("name"),
            monthly_price_cents=body.get("monthly_price_cents"),
            per_call_cents=body.get("per_call_cents"),
            credit_price_cents=body.get("credit_price_cents"),
            credit_value_usd=body.get("credit_value_usd"),
            current=body.get("current"),
            included_calls=body.get("included_calls"),
            included_credits=body.get("included_credits"),
            action=body.get("action"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class PaygInvoice:
    """What the API answers as PaygInvoice."""

    __quarry_schema__: ClassVar[str] = "PaygInvoice"

    period: str
    status: str
    amount_cents: int
    amount_usd: float
    lines: List["PaygInvoiceLine"]
    invoice_id: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "PaygInvoice":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            period=body.get("period"),
            status=body.get("status"),
            amount_cents=body.get("amount_cents"),
            amount_usd=body.get("amount_usd"),
            lines=None if body.get("lines") is None else [PaygInvoiceLine.from_json(item) for item in body.get("lines")],
            invoice_id=body.get("invoice_id"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class PaygInvoiceLine:
    """`lines[]` of PaygInvoice."""

    __quarry_schema__: ClassVar[str] = "PaygInvoice.lines[]"

    description: str
    amount_cents: int
    analytic: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "PaygInvoiceLine":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            description=body.get("description"),
            amount_cents=body.get("amount_cents"),
            analytic=body.get("analytic"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Checkout:
    """What the API answers as Checkout."""

    __quarry_schema__: ClassVar[str] = "Checkout"

    id: str
    #: Open it in a browser to pay
    url: str
    #: `setup`: a card saved for Pay as you Go
    mode: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Checkout":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            url=body.get("url"),
            mode=body.get("mode"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Portal:
    """What the API answers as Portal."""

    __quarry_schema__: ClassVar[str] = "Portal"

    url: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Portal":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            url=body.get("url"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Onboarding:
    """What the API answers as Onboarding."""

    __quarry_schema__: ClassVar[str] = "Onboarding"

    url: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Onboarding":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            url=body.get("url"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class PayoutAccount:
    """What the API answers as PayoutAccount."""

    __quarry_schema__: ClassVar[str] = "PayoutAccount"

    provider: str
    #: `complete`: the provider pays out to you; `pending`: it still needs `requirements`
    status: str
    payouts_enabled: bool
    #: What the provider still needs from you
    requirements: List[str]
    #: Smaller payouts are held and carried to the next month
    minimum_payout_cents: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "PayoutAccount":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            provider=body.get("provider"),
            status=body.get("status"),
            payouts_enabled=body.get("payouts_enabled"),
            requirements=None if body.get("requirements") is None else list(body.get("requirements")),
            minimum_payout_cents=body.get("minimum_payout_cents"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Payouts:
    """What the API answers as Payouts."""

    __quarry_schema__: ClassVar[str] = "Payouts"

    #: Held and carried now (negative after refunds larger than earnings: netted against later ones)
    balance_micro_usd: int
    balance_usd: float
    #: Newest first
    payouts: List["OwnerPayout"]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Payouts":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            balance_micro_usd=body.get("balance_micro_usd"),
            balance_usd=body.get("balance_usd"),
            payouts=None if body.get("payouts") is None else [OwnerPayout.from_json(item) for item in body.get("payouts")],
            raw=dict(body),
        )


@dataclass(frozen=True)
class OwnerPayout:
    """What the API answers as OwnerPayout."""

    __quarry_schema__: ClassVar[str] = "OwnerPayout"

    #: Your balance before it: the rest of your previous payout, an amount held, or a negative balance
    carried_in_micro_usd: int
    earned_micro_usd: int
    #: Shares taken back by refunds and disputes of callers’ payments, netted here
    adjusted_micro_usd: int
    #: Paid out: whole cents, rounded down
    payout_cents: int
    payout_usd: float
    #: Carried into your next payout
    carried_out_micro_usd: int
    #: `held` (see `reason`: carried whole to the next month), `pending` (a transfer under way), `paid`, `failed` (carried, tried again at the next close), `operator` (the gateway takes no payments: its operator pays you)
    status: str
    period: str
    #: `below_minimum`, `not_onboarded`, `negative_balance`, or why a transfer failed
    reason: Optional[str] = None
    reason_text: Optional[str] = None
    #: The payment provider’s reference of the transfer
    transfer_id: Optional[str] = None
    paid_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "OwnerPayout":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            carried_in_micro_usd=body.get("carried_in_micro_usd"),
            earned_micro_usd=body.get("earned_micro_usd"),
            adjusted_micro_usd=body.get("adjusted_micro_usd"),
            payout_cents=body.get("payout_cents"),
            payout_usd=body.get("payout_usd"),
            carried_out_micro_usd=body.get("carried_out_micro_usd"),
            status=body.get("status"),
            period=body.get("period"),
            reason=body.get("reason"),
            reason_text=body.get("reason_text"),
            transfer_id=body.get("transfer_id"),
            paid_at=body.get("paid_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Payout:
    """What the API answers as Payout."""

    __quarry_schema__: ClassVar[str] = "Payout"

    #: Your balance before it: the rest of your previous payout, an amount held, or a negative balance
    carried_in_micro_usd: int
    earned_micro_usd: int
    #: Shares taken back by refunds and disputes of callers’ payments, netted here
    adjusted_micro_usd: int
    #: Paid out: whole cents, rounded down
    payout_cents: int
    payout_usd: float
    #: Carried into your next payout
    carried_out_micro_usd: int
    #: `held` (see `reason`: carried whole to the next month), `pending` (a transfer under way), `paid`, `failed` (carried, tried again at the next close), `operator` (the gateway takes no payments: its operator pays you)
    status: str
    #: `below_minimum`, `not_onboarded`, `negative_balance`, or why a transfer failed
    reason: Optional[str] = None
    reason_text: Optional[str] = None
    #: The payment provider’s reference of the transfer
    transfer_id: Optional[str] = None
    paid_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Payout":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            carried_in_micro_usd=body.get("carried_in_micro_usd"),
            earned_micro_usd=body.get("earned_micro_usd"),
            adjusted_micro_usd=body.get("adjusted_micro_usd"),
            payout_cents=body.get("payout_cents"),
            payout_usd=body.get("payout_usd"),
            carried_out_micro_usd=body.get("carried_out_micro_usd"),
            status=body.get("status"),
            reason=body.get("reason"),
            reason_text=body.get("reason_text"),
            transfer_id=body.get("transfer_id"),
            paid_at=body.get("paid_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class OwnerStatement:
    """What the API answers as OwnerStatement."""

    __quarry_schema__: ClassVar[str] = "OwnerStatement"

    period: str
    analytics: List["StatementAnalytic"]
    totals: "StatementTotals"
    #: Per day and analytic (days and analytics with calls only), in date then name order
    by_day: List["StatementDay"]
    #: Shares taken back by refunds and disputes: netted by this period’s payout once closed; while open, those the next close will net
    adjustments: List["StatementAdjustment"]
    #: Calls of other accounts that failed after running in your warehouse (timeouts, results too large, warehouse errors), per caller and analytic, most warehouse time first. Free for the caller and earning nothing; a caller past QUARRY_FAILED_WAREHOUSE_SECONDS is throttled.
    failed_calls: List["StatementFailedCalls"]
    #: Set once the period is closed (frozen)
    closed_at: Optional[str] = None
    payout: Optional["StatementPayout"] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "OwnerStatement":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            period=body.get("period"),
            analytics=None if body.get("analytics") is None else [StatementAnalytic.from_json(item) for item in body.get("analytics")],
            totals=None if body.get("totals") is None else StatementTotals.from_json(body.get("totals")),
            by_day=None if body.get("by_day") is None else [StatementDay.from_json(item) for item in body.get("by_day")],
            adjustments=None if body.get("adjustments") is None else [StatementAdjustment.from_json(item) for item in body.get("adjustments")],
            failed_calls=None if body.get("failed_calls") is None else [StatementFailedCalls.from_json(item) for item in body.get("failed_calls")],
            closed_at=body.get("closed_at"),
            payout=None if body.get("payout") is None else StatementPayout.from_json(body.get("payout")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class StatementAnalytic:
    """`analytics[]` of OwnerStatement."""

    __quarry_schema__: ClassVar[str] = "OwnerStatement.analytics[]"

    #: Served calls of every origin
    calls: int
    calls_by_origin: "CallsByOrigin"
    #: Credits the callers spent
    credits: float
    #: Your credits: exactly 0.8 of each credit spent
    owner_share: float
    #: The rest: the two sum to `credits`
    platform_share: float
    millicredits: int
    owner_share_millicredits: int
    platform_share_millicredits: int
    #: What the callers paid for those credits (Free plan: 0)
    value_usd: float
    #: 80% of each call’s value, rounded down to the µUSD
    owner_share_usd: float
    platform_share_usd: float
    value_micro_usd: int
    owner_share_micro_usd: int
    platform_share_micro_usd: int
    name: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "StatementAnalytic":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            calls=body.get("calls"),
            calls_by_origin=None if body.get("calls_by_origin") is None else CallsByOrigin.from_json(body.get("calls_by_origin")),
            credits=body.get("credits"),
            owner_share=body.get("owner_share"),
            platform_share=body.get("platform_share"),
            millicredits=body.get("millicredits"),
            owner_share_millicredits=body.get("owner_share_millicredits"),
            platform_share_millicredits=body.get("platform_share_millicredits"),
            value_usd=body.get("value_usd"),
            owner_share_usd=body.get("owner_share_usd"),
            platform_share_usd=body.get("platform_share_usd"),
            value_micro_usd=body.get("value_micro_usd"),
            owner_share_micro_usd=body.get("owner_share_micro_usd"),
            platform_share_micro_usd=body.get("platform_share_micro_usd"),
            name=body.get("name"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class StatementTotals:
    """`totals` of OwnerStatement."""

    __quarry_schema__: ClassVar[str] = "OwnerStatement.totals"

    #: Served calls of every origin
    calls: int
    calls_by_origin: "CallsByOrigin"
    #: Credits the callers spent
    credits: float
    #: Your credits: exactly 0.8 of each credit spent
    owner_share: float
    #: The rest: the two sum to `credits`
    platform_share: float
    millicredits: int
    owner_share_millicredits: int
    platform_share_millicredits: int
    #: What the callers paid for those credits (Free plan: 0)
    value_usd: float
    #: 80% of each call’s value, rounded down to the µUSD
    owner_share_usd: float
    platform_share_usd: float
    value_micro_usd: int
    owner_share_micro_usd: int
    platform_share_micro_usd: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "StatementTotals":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            calls=body.get("calls"),
            calls_by_origin=None if body.get("calls_by_origin") is None else CallsByOrigin.from_json(body.get("calls_by_origin")),
            credits=body.get("credits"),
            owner_share=body.get("owner_share"),
            platform_share=body.get("platform_share"),
            millicredits=body.get("millicredits"),
            owner_share_millicredits=body.get("owner_share_millicredits"),
            platform_share_millicredits=body.get("platform_share_millicredits"),
            value_usd=body.get("value_usd"),
            owner_share_usd=body.get("owner_share_usd"),
            platform_share_usd=body.get("platform_share_usd"),
            value_micro_usd=body.get("value_micro_usd"),
            owner_share_micro_usd=body.get("owner_share_micro_usd"),
            platform_share_micro_usd=body.get("platform_share_micro_usd"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class StatementDay:
    """`by_day[]` of OwnerStatement."""

    __quarry_schema__: ClassVar[str] = "OwnerStatement.by_day[]"

    #: Served calls of every origin
    calls: int
    calls_by_origin: "CallsByOrigin"
    #: Credits the callers spent
    credits: float
    #: Your credits: exactly 0.8 of each credit spent
    owner_share: float
    #: The rest: the two sum to `credits`
    platform_share: float
    millicredits: int
    owner_share_millicredits: int
    platform_share_millicredits: int
    #: What the callers paid for those credits (Free plan: 0)
    value_usd: float
    #: 80% of each call’s value, rounded down to the µUSD
    owner_share_usd: float
    platform_share_usd: float
    value_micro_usd: int
    owner_share_micro_usd: int
    platform_share_micro_usd: int
    #: YYYY-MM-DD, UTC
    date: str
    name: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "StatementDay":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            calls=body.get("calls"),
            calls_by_origin=None if body.get("calls_by_origin") is None else CallsByOrigin.from_json(body.get("calls_by_origin")),
            credits=body.get("credits"),
            owner_share=body.get("owner_share"),
            platform_share=body.get("platform_share"),
            millicredits=body.get("millicredits"),
            owner_share_millicredits=body.get("owner_share_millicredits"),
            platform_share_millicredits=body.get("platform_share_millicredits"),
            value_usd=body.get("value_usd"),
            owner_share_usd=body.get("owner_share_usd"),
            platform_share_usd=body.get("platform_share_usd"),
            value_micro_usd=body.get("value_micro_usd"),
            owner_share_micro_usd=body.get("owner_share_micro_usd"),
            platform_share_micro_usd=body.get("platform_share_micro_usd"),
            date=body.get("date"),
            name=body.get("name"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class StatementPayout:
    """`payout` of OwnerStatement."""

    __quarry_schema__: ClassVar[str] = "OwnerStatement.payout"

    #: Your balance before it: the rest of your previous payout, an amount held, or a negative balance
    carried_in_micro_usd: int
    earned_micro_usd: int
    #: Shares taken back by refunds and disputes of callers’ payments, netted here
    adjusted_micro_usd: int
    #: Paid out: whole cents, rounded down
    payout_cents: int
    payout_usd: float
    #: Carried into your next payout
    carried_out_micro_usd: int
    #: `held` (see `reason`: carried whole to the next month), `pending` (a transfer under way), `paid`, `failed` (carried, tried again at the next close), `operator` (the gateway takes no payments: its operator pays you)
    status: str
    #: `below_minimum`, `not_onboarded`, `negative_balance`, or why a transfer failed
    reason: Optional[str] = None
    reason_text: Optional[str] = None
    #: The payment provider’s reference of the transfer
    transfer_id: Optional[str] = None
    paid_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "StatementPayout":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            carried_in_micro_usd=body.get("carried_in_micro_usd"),
            earned_micro_usd=body.get("earned_micro_usd"),
            adjusted_micro_usd=body.get("adjusted_micro_usd"),
            payout_cents=body.get("payout_cents"),
            payout_usd=body.get("payout_usd"),
            carried_out_micro_usd=body.get("carried_out_micro_usd"),
            status=body.get("status"),
            reason=body.get("reason"),
            reason_text=body.get("reason_text"),
            transfer_id=body.get("transfer_id"),
            paid_at=body.get("paid_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class StatementAdjustment:
    """What the API answers as StatementAdjustment."""

    __quarry_schema__: ClassVar[str] = "StatementAdjustment"

    analytic: str
    #: The month of the calls whose payment was reversed
    usage_period: str
    reason: str
    #: Negative: your share taken back
    owner_micro_usd: int
    owner_usd: float
    #: Negative: the platform’s share taken back
    platform_micro_usd: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "StatementAdjustment":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            analytic=body.get("analytic"),
            usage_period=body.get("usage_period"),
            reason=body.get("reason"),
            owner_micro_usd=body.get("owner_micro_usd"),
            owner_usd=body.get("owner_usd"),
            platform_micro_usd=body.get("platform_micro_usd"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class StatementFailedCalls:
    """What the API answers as StatementFailedCalls."""

    __quarry_schema__: ClassVar[str] = "StatementFailedCalls"

    #: The calling account
    caller_account_id: str
    analytic: str
    #: Its failed calls of this analytic in the period
    calls: int
    #: By the error the caller got: QUERY_TIMEOUT, RESULT_TOO_LARGE, UPSTREAM_ERROR
    calls_by_code: Dict[str, Any]
    #: Time those calls kept your warehouse busy
    warehouse_seconds: float
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "StatementFailedCalls":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            caller_account_id=body.get("caller_account_id"),
            analytic=body.get("analytic"),
            calls=body.get("calls"),
            calls_by_code=body.get("calls_by_code"),
            warehouse_seconds=body.get("warehouse_seconds"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class OwnerListing:
    """What the API answers as OwnerListing."""

    __quarry_schema__: ClassVar[str] = "OwnerListing"

    name: str
    title: str
    description: str
    category: str
    tags: List[str]
    #: Credits a call pays now
    price: int
    example_params: Dict[str, Any]
    previews: bool
    published: bool
    published_at: str
    updated_at: str
    #: A price rise not in force yet (QUARRY_PRICE_NOTICE_HOURS), or null
    scheduled_price: Optional[int] = None
    #: When `scheduled_price` takes effect (ISO 8601), or null
    price_effective_at: Optional[str] = None
    unpublished_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "OwnerListing":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            name=body.get("name"),
            title=body.get("title"),
            description=body.get("description"),
            category=body.get("category"),
            tags=None if body.get("tags") is None else list(body.get("tags")),
            price=body.get("price"),
            example_params=body.get("example_params"),
            previews=body.get("previews"),
            published=body.get("published"),
            published_at=body.get("published_at"),
            updated_at=body.get("updated_at"),
            scheduled_price=body.get("scheduled_price"),
            price_effective_at=body.get("price_effective_at"),
            unpublished_at=body.get("unpublished_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class Listing:
    """What the API answers as Listing."""

    __quarry_schema__: ClassVar[str] = "Listing"

    #: The analytic: the `source` of a query
    name: str
    title: str
    description: str
    category: str
    tags: List[str]
    #: Credits a call pays now (the price in force)
    price: int
    #: Paid calls in the last 30 days (on a paying plan, by others than its owner; previews, Free-plan calls and the owner’s own calls are not counted)
    calls_30d: int
    #: Distinct accounts that made those paid calls
    callers_30d: int
    #: The account that publishes it
    owner: "ListingOwner"
    #: Whether it can be tried for free (`POST /v1/marketplace/try-token`)
    previews: bool
    published_at: str
    #: A price rise the owner scheduled, or null: calls pay it from `price_effective_at` (QUARRY_PRICE_NOTICE_HOURS after the deploy that raised it)
    scheduled_price: Optional[int] = None
    #: When `scheduled_price` takes effect (ISO 8601), or null
    price_effective_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Listing":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            name=body.get("name"),
            title=body.get("title"),
            description=body.get("description"),
            category=body.get("category"),
            tags=None if body.get("tags") is None else list(body.get("tags")),
            price=body.get("price"),
            calls_30d=body.get("calls_30d"),
            callers_30d=body.get("callers_30d"),
            owner=None if body.get("owner") is None else ListingOwner.from_json(body.get("owner")),
            previews=body.get("previews"),
            published_at=body.get("published_at"),
            scheduled_price=body.get("scheduled_price"),
            price_effective_at=body.get("price_effective_at"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class ListingOwner:
    """The account that publishes it"""

    __quarry_schema__: ClassVar[str] = "Listing.owner"

    name: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "ListingOwner":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            name=body.get("name"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class ListingDetail:
    """What the API answers as ListingDetail."""

    __quarry_schema__: ClassVar[str] = "ListingDetail"

    #: The analytic: the `source` of a query
    name: str
    title: str
    description: str
    category: str
    tags: List[str]
    #: Credits a call pays now (the price in force)
    price: int
    #: Paid calls in the last 30 days (on a paying plan, by others than its owner; previews, Free-plan calls and the owner’s own calls are not counted)
    calls_30d: int
    #: Distinct accounts that made those paid calls
    callers_30d: int
    #: The account that publishes it
    owner: Dict[str, Any]
    #: Whether it can be tried for free (`POST /v1/marketplace/try-token`)
    previews: bool
    published_at: str
    #: The analytic version that runs now
    version: int
    #: The param schema
    params: Dict[str, Any]
    example_params: Dict[str, Any]
    example_request: "ExampleRequest"
    #: The same request as a shell command (key in $QUARRY_API_KEY)
    curl: str
    #: Older versions callers may still pin (`name@N`) that its owner deprecated, with their sunset dates
    deprecated_versions: List["DeprecatedVersion"]
    #: A price rise the owner scheduled, or null: calls pay it from `price_effective_at` (QUARRY_PRICE_NOTICE_HOURS after the deploy that raised it)
    scheduled_price: Optional[int] = None
    #: When `scheduled_price` takes effect (ISO 8601), or null
    price_effective_at: Optional[str] = None
    #: The output shape the analytic declares (`insights` of its definition), or null
    insights: Optional[Dict[str, Any]] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "ListingDetail":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            name=body.get("name"),
            title=body.get("title"),
            description=body.get("description"),
            category=body.get("category"),
            tags=None if body.get("tags") is None else list(body.get("tags")),
            price=body.get("price"),
            calls_30d=body.get("calls_30d"),
            callers_30d=body.get("callers_30d"),
            owner=body.get("owner"),
            previews=body.get("previews"),
            published_at=body.get("published_at"),
            version=body.get("version"),
            params=body.get("params"),
            example_params=body.get("example_params"),
            example_request=None if body.get("example_request") is None else ExampleRequest.from_json(body.get("example_request")),
            curl=body.get("curl"),
            deprecated_versions=None if body.get("deprecated_versions") is None else [DeprecatedVersion.from_json(item) for item in body.get("deprecated_versions")],
            scheduled_price=body.get("scheduled_price"),
            price_effective_at=body.get("price_effective_at"),
            insights=body.get("insights"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class ExampleRequest:
    """`example_request` of ListingDetail."""

    __quarry_schema__: ClassVar[str] = "ListingDetail.example_request"

    method: str
    url: str
    body: "ExampleRequestBody"
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "ExampleRequest":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            method=body.get("method"),
            url=body.get("url"),
            body=None if body.get("body") is None else ExampleRequestBody.from_json(body.get("body")),
            raw=dict(body),
        )


@dataclass(frozen=True)
class ExampleRequestBody:
    """`example_request.body` of ListingDetail."""

    __quarry_schema__: ClassVar[str] = "ListingDetail.example_request.body"

    source: str
    params: Dict[str, Any]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "ExampleRequestBody":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            source=body.get("source"),
            params=body.get("params"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class TryToken:
    """What the API answers as TryToken."""

    __quarry_schema__: ClassVar[str] = "TryToken"

    token: str
    expires_at: str
    token_type: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "TryToken":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            token=body.get("token"),
            expires_at=body.get("expires_at"),
            token_type=body.get("token_type"),
            raw=dict(body),
        )


@dataclass(frozen=True)
class OAuthClient:
    """What the API answers as OAuthClient."""

    __quarry_schema__: ClassVar[str] = "OAuthClient"

    #: The record id (`ocl_…`), used to revoke it
    id: str
    #: What the client authenticates with (`qci_…`)
    client_id: str
    name: str
    scopes: List[str]
    created_at: str
    revoked_at: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "OAuthClient":
        """Builds one from the gateway's decoded JSON."""
        return cls(
            id=body.get("id"),
            client_id=body.get("client_id"),
            name=body.get("name"),
            scopes=None if body.get("scopes") is None else list(body.get("scopes")),
            created_at=body.get("created_at"),
            revoked_at=body.get("revoked_at"),
            raw=dict(body),
        )
