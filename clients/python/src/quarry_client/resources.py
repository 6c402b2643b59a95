"""The rest of the API: the account, budget, agent tools and MCP settings, plans, billing, payouts, OAuth clients, connectors,
an owner's connections, analytics, listings and statements, and the marketplace.

Each resource is an attribute of :class:`~quarry_client.QuarryClient` (``client.marketplace``,
``client.connections`` …); its methods return the models of :mod:`quarry_client.api_models`.
"""
from __future__ import annotations

import urllib.parse
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

from .api_models import (
    Job,
    Account,
    AlertSettings,
    AgentTool,
    Analytic,
    AnalyticVersion,
    IssuedWebhookEndpoint,
    Billing,
    Budget,
    Call,
    Calls,
    Checkout,
    Circuit,
    Connection,
    ConnectionRemoval,
    ConnectorTypes,
    CorsSettingsCors,
    DeprecatedVersion,
    EmbedSecret,
    EmbedToken,
    IssuedEmbedSecret,
    Listing,
    ListingDetail,
    McpDefaults,
    OAuthClient,
    Onboarding,
    OwnerListing,
    OwnerStatement,
    PayoutAccount,
    Payouts,
    Plan,
    Portal,
    TryToken,
    WebhookDelivery,
    WebhookEndpoint,
)
from .transport import ApiRequest, Transport

__all__ = [
    "AccountResource",
    "BudgetResource",
    "WebhooksResource",
    "AlertsResource",
    "ToolsResource",
    "McpResource",
    "PlansResource",
    "BillingResource",
    "PayoutsResource",
    "OAuthClientsResource",
    "EmbedTokensResource",
    "EmbedSecretsResource",
    "CallsResource",
    "CorsResource",
    "ConnectorsResource",
    "ConnectionsResource",
    "ListingsResource",
    "StatementsResource",
    "MarketplaceResource",
    "OwnerAnalytics",
]


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _flag(value: Optional[bool]) -> Optional[str]:
    """``false`` for False (the gateway's default is true); None leaves the flag out."""
    return None if value is None or value else "false"


class _Resource:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def _send(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._transport.send(ApiRequest(method, path, **kwargs))


class AccountResource(_Resource):
    """Your account (``client.account``)."""

    def get(self) -> Account:
        """The account the credential belongs to (``GET /v1/account``)."""
        return Account.from_json(self._send("GET", "/v1/account")["account"])

    def set_password(self, password: str, *, current_password: Optional[str] = None) -> None:
        """Sets the console's sign-in password (10–200 characters).

        ``current_password`` is needed only with a console session when one is set already.
        """
        body: Dict[str, Any] = {"password": password}
        if current_password is not None:
            body["current_password"] = current_password
        self._send("PUT", "/v1/account/password", body=body)


class BudgetResource(_Resource):
    """Pay as you Go: the most the account may spend in a period, in USD (``client.budget``)."""

    def get(self) -> Budget:
        """The budget, what is spent and left this period, and the operator's cap."""
        return Budget.from_json(self._send("GET", "/v1/account/budget"))

    def set(self, budget_usd: float) -> Budget:
        """Sets the budget (whole cents; at most the operator's cap)."""
        return Budget.from_json(self._send("PUT", "/v1/account/budget", body={"budget_usd": budget_usd}))


class JobsResource(_Resource):
    """Asynchronous queries (``client.jobs``; docs/large-results.md): a job runs past the
    synchronous time limit, is charged once when it succeeds, and its result is read in pages from
    the gateway instance that ran it."""

    def submit(
        self, source: str, params: Optional[Mapping[str, Any]] = None, *, max_credits: Optional[int] = None
    ) -> Job:
        """Submits a query as a job (``Prefer: respond-async``): the queued job, once admitted."""
        body: Dict[str, Any] = {"source": source, "params": dict(params or {})}
        if max_credits is not None:
            body["max_credits"] = max_credits
        return Job.from_json(
            self._send("POST", "/v1/query", body=body, headers={"Prefer": "respond-async"}, idempotent=False)
        )

    def get(self, id: str, *, page_size: Optional[int] = None, cursor: Optional[str] = None) -> Job:
        """The job's state, and once succeeded a page of its result (``result.meta.next``: the next cursor)."""
        query: Dict[str, Any] = {}
        if page_size is not None:
            query["page_size"] = str(page_size)
        if cursor is not None:
            query["cursor"] = cursor
        return Job.from_json(self._send("GET", f"/v1/jobs/{_segment(id)}", query=query))

    def list(self, *, state: Optional[str] = None, limit: Optional[int] = None) -> List[Job]:
        """The account's recent jobs, newest first."""
        query: Dict[str, Any] = {}
        if state is not None:
            query["state"] = state
        if limit is not None:
            query["limit"] = str(limit)
        return [Job.from_json(j) for j in self._send("GET", "/v1/jobs", query=query)["items"]]

    def cancel(self, id: str) -> Job:
        """Cancels the job: its warehouse query stops, and it is not charged."""
        return Job.from_json(self._send("DELETE", f"/v1/jobs/{_segment(id)}"))

    def wait(self, id: str, *, interval: float = 1.0, timeout: Optional[float] = None) -> Job:
        """Polls the job every ``interval`` seconds until it succeeded, failed or was cancelled;
        raises ``TimeoutError`` past ``timeout`` seconds."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.get(id)
            if job.state not in ("queued", "running"):
                return job
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"The job {id} is still {job.state} after {timeout} s.")
            time.sleep(interval if deadline is None else max(0.0, min(interval, deadline - time.monotonic())))


class WebhooksResource(_Resource):
    """Webhook endpoints of the account (``client.webhooks``; needs the ``account`` scope): signed
    events out (docs/webhooks.md). Check deliveries with :class:`~quarry_client.Webhook`."""

    def create(
        self, url: str, *, description: Optional[str] = None, event_types: Optional[Sequence[str]] = None
    ) -> IssuedWebhookEndpoint:
        """Adds an endpoint; its ``secret`` (``whsec_…``) is shown this once. No ``event_types``: every type."""
        body: Dict[str, Any] = {"url": url}
        if description is not None:
            body["description"] = description
        if event_types is not None:
            body["event_types"] = list(event_types)
        return IssuedWebhookEndpoint.from_json(self._send("POST", "/v1/webhooks", body=body, idempotent=False))

    def list(self) -> List[WebhookEndpoint]:
        """The account's endpoints (never a secret)."""
        return [WebhookEndpoint.from_json(e) for e in self._send("GET", "/v1/webhooks")["endpoints"]]

    def get(self, id: str) -> WebhookEndpoint:
        """One endpoint."""
        return WebhookEndpoint.from_json(self._send("GET", f"/v1/webhooks/{_segment(id)}")["endpoint"])

    def update(
        self,
        id: str,
        *,
        url: Optional[str] = None,
        description: Optional[str] = None,
        event_types: Optional[Sequence[str]] = None,
        enabled: Optional[bool] = None,
    ) -> WebhookEndpoint:
        """Changes the given fields; ``enabled=True`` re-enables an endpoint the gateway disabled."""
        body: Dict[str, Any] = {}
        if url is not None:
            body["url"] = url
        if description is not None:
            body["description"] = description
        if event_types is not None:
            body["event_types"] = list(event_types)
        if enabled is not None:
            body["enabled"] = enabled
        return WebhookEndpoint.from_json(self._send("PATCH", f"/v1/webhooks/{_segment(id)}", body=body)["endpoint"])

    def delete(self, id: str) -> WebhookEndpoint:
        """Deletes an endpoint; its pending deliveries are dropped."""
        return WebhookEndpoint.from_json(self._send("DELETE", f"/v1/webhooks/{_segment(id)}")["endpoint"])

    def rotate_secret(self, id: str, overlap_hours: Optional[float] = None) -> IssuedWebhookEndpoint:
        """A new secret (shown once); the old one keeps signing for ``overlap_hours`` (default 24)."""
        body = {} if overlap_hours is None else {"overlap_hours": overlap_hours}
        return IssuedWebhookEndpoint.from_json(
            self._send("POST", f"/v1/webhooks/{_segment(id)}/rotate-secret", body=body, idempotent=False)
        )

    def test(self, id: str) -> str:
        """Sends a ``webhook.test`` event to the endpoint; its event id (the ``webhook-id``)."""
        return self._send("POST", f"/v1/webhooks/{_segment(id)}/test", idempotent=False)["event_id"]

    def deliveries(self, id: str, limit: Optional[int] = None) -> List[WebhookDelivery]:
        """The endpoint's delivery log, newest first (status, attempts, latency)."""
        query = None if limit is None else {"limit": limit}
        rows = self._send("GET", f"/v1/webhooks/{_segment(id)}/deliveries", query=query)["deliveries"]
        return [WebhookDelivery.from_json(d) for d in rows]

    def replay(self, id: str, delivery_id: str) -> WebhookDelivery:
        """Sends a finished delivery again, with the same ``webhook-id``."""
        path = f"/v1/webhooks/{_segment(id)}/deliveries/{_segment(delivery_id)}/replay"
        return WebhookDelivery.from_json(self._send("POST", path)["delivery"])


class AlertsResource(_Resource):
    """The account's alert thresholds (``client.alerts``; needs the ``account`` scope)."""

    def get(self) -> AlertSettings:
        """The usage thresholds (percent) and the analytic error rate that trigger alerts."""
        return AlertSettings.from_json(self._send("GET", "/v1/account/alerts")["alerts"])

    def set(self, usage_thresholds: Sequence[int], error_rate_percent: int) -> AlertSettings:
        """Sets both (thresholds 1–100, at most 10; error rate 1–100)."""
        body = {"usage_thresholds": list(usage_thresholds), "error_rate_percent": error_rate_percent}
        return AlertSettings.from_json(self._send("PUT", "/v1/account/alerts", body=body)["alerts"])


class ToolsResource(_Resource):
    """The account's agent tools (``client.tools``; needs the ``account`` scope): the analytics its
    agents see and may call on ``/mcp``, its own and those added here (docs/mcp.md)."""

    def list(self) -> List[AgentTool]:
        """Every tool of the account: its own live analytics and those it added that it may still call."""
        return [AgentTool.from_json(t) for t in self._send("GET", "/v1/account/tools")["items"]]

    def add(self, name: str) -> AgentTool:
        """Adds an analytic the account may call (public or shared with it); adding twice is adding once.

        Raises :class:`~quarry_client.NotFoundError` (``SOURCE_NOT_FOUND``) for one it may not call.
        """
        return AgentTool.from_json(self._send("POST", "/v1/account/tools", body={"source": name})["tool"])

    def remove(self, name: str) -> None:
        """Removes a tool the account added (``NOT_FOUND`` when it was not added; its own stay tools)."""
        self._send("DELETE", f"/v1/account/tools/{_segment(name)}")


class McpResource(_Resource):
    """The account's MCP settings (``client.mcp``; needs the ``account`` scope)."""

    def get(self) -> McpDefaults:
        """The price limit of an MCP tool call without its own ``max_credits`` (None: none)."""
        return McpDefaults.from_json(self._send("GET", "/v1/account/mcp")["mcp"])

    def set(self, max_credits: Optional[int]) -> McpDefaults:
        """Sets that limit in credits (at least 1); None removes it. REST calls are not affected."""
        return McpDefaults.from_json(self._send("PUT", "/v1/account/mcp", body={"max_credits": max_credits})["mcp"])


class PlansResource(_Resource):
    """The plans on offer (``client.plans``)."""

    def list(self) -> List[Plan]:
        """Every plan: credits included, monthly price, what a credit costs."""
        return [Plan.from_json(p) for p in self._send("GET", "/v1/plans")["plans"]]


class BillingResource(_Resource):
    """The account's plan, subscription, card and invoices (``client.billing``)."""

    def get(self) -> Billing:
        """The plan, subscription, card, budget, the plans it may move to, and invoices."""
        return Billing.from_json(self._send("GET", "/v1/billing"))

    def checkout(self, plan: str, *, return_url: Optional[str] = None) -> Checkout:
        """A checkout for ``plan`` (a paid plan, or ``payg``: a card on file); open its ``url``.

        The plan changes once the payment arrives: poll :meth:`get` until ``plan.id`` does.
        """
        body: Dict[str, Any] = {"plan": plan}
        if return_url is not None:
            body["return_url"] = return_url
        # Each attempt opens a checkout of its own: only a refused call is repeated.
        return Checkout.from_json(self._send("POST", "/v1/billing/checkout", body=body, idempotent=False))

    def portal(self, *, return_url: Optional[str] = None) -> Portal:
        """The payment provider's page for the card, the invoices and cancelling."""
        body = {} if return_url is None else {"return_url": return_url}
        return Portal.from_json(self._send("POST", "/v1/billing/portal", body=body, idempotent=False))


class PayoutsResource(_Resource):
    """Being paid as an owner: 80% of what callers paid, monthly (``client.payouts``)."""

    def account(self) -> PayoutAccount:
        """Where payouts go: the provider's account state, what it still needs, the minimum."""
        return PayoutAccount.from_json(self._send("GET", "/v1/owner/payouts/account"))

    def onboarding(self, *, return_url: Optional[str] = None) -> Onboarding:
        """The provider's onboarding page (a new URL each call); poll :meth:`account` after."""
        body = {} if return_url is None else {"return_url": return_url}
        return Onboarding.from_json(self._send("POST", "/v1/owner/payouts/onboarding", body=body, idempotent=False))

    def list(self) -> Payouts:
        """The balance held and carried, and each closed period's payout, newest first."""
        return Payouts.from_json(self._send("GET", "/v1/owner/payouts"))


class OAuthClientsResource(_Resource):
    """OAuth clients of your account, for services that call the gateway (``client.oauth_clients``)."""

    def create(self, name: str, *, scopes: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """A new client: ``{"client": OAuthClient, "client_secret": "qcs_…"}``, the secret shown this once."""
        body: Dict[str, Any] = {"name": name}
        if scopes is not None:
            body["scopes"] = list(scopes)
        answer = self._send("POST", "/v1/oauth/clients", body=body, idempotent=False)
        return {"client": OAuthClient.from_json(answer["client"]), "client_secret": answer["client_secret"]}

    def list(self) -> List[OAuthClient]:
        """Every OAuth client of the account, revoked ones included (never a secret)."""
        return [OAuthClient.from_json(c) for c in self._send("GET", "/v1/oauth/clients")["clients"]]

    def revoke(self, client_id: str) -> None:
        """Revokes a client (by its record id, ``ocl_…``): its tokens stop working."""
        self._send("DELETE", f"/v1/oauth/clients/{_segment(client_id)}")


class EmbedTokensResource(_Resource):
    """Embed tokens for web pages (``client.embed_tokens``): mint them on your server, never in a page."""

    def create(
        self,
        analytics: Sequence[Mapping[str, Any]],
        *,
        origins: Optional[Sequence[str]] = None,
        expires_in: Optional[int] = None,
        rate_limit: Optional[Mapping[str, int]] = None,
    ) -> EmbedToken:
        """A token calling ``analytics`` only (``[{"name": …, "fixed_params": {…}}]``), from ``origins`` only.

        ``expires_in``: seconds, at most 86400 (default 3600); ``rate_limit``:
        ``{"limit": n, "window_seconds": s}``, its own besides the account's. Needs the ``query`` scope.
        """
        body: Dict[str, Any] = {"analytics": [dict(a) for a in analytics]}
        if origins is not None:
            body["origins"] = list(origins)
        if expires_in is not None:
            body["expires_in"] = expires_in
        if rate_limit is not None:
            body["rate_limit"] = dict(rate_limit)
        return EmbedToken.from_json(self._send("POST", "/v1/embed-tokens", body=body)["embed_token"])


class EmbedSecretsResource(_Resource):
    """HS256 secrets your backend mints embed tokens with offline (``client.embed_secrets``; ``keys`` scope)."""

    def create(self, name: str) -> IssuedEmbedSecret:
        """A new secret; its ``secret`` is shown this once (its ``id`` is the tokens' ``kid``)."""
        answer = self._send("POST", "/v1/embed-secrets", body={"name": name}, idempotent=False)
        return IssuedEmbedSecret.from_json(answer["embed_secret"])

    def list(self) -> List[EmbedSecret]:
        """The secrets that still verify tokens (never a secret)."""
        return [EmbedSecret.from_json(s) for s in self._send("GET", "/v1/embed-secrets")["embed_secrets"]]

    def rotate(self, secret_id: str, *, overlap_seconds: Optional[int] = None) -> Dict[str, Any]:
        """A new secret; the old one verifies ``overlap_seconds`` more (default 86400).

        Returns ``{"embed_secret": IssuedEmbedSecret, "previous": EmbedSecret}``.
        """
        body = {} if overlap_seconds is None else {"overlap_seconds": overlap_seconds}
        answer = self._send("POST", f"/v1/embed-secrets/{_segment(secret_id)}/rotate", body=body, idempotent=False)
        return {
            "embed_secret": IssuedEmbedSecret.from_json(answer["embed_secret"]),
            "previous": EmbedSecret.from_json(answer["previous"]),
        }

    def revoke(self, secret_id: str) -> EmbedSecret:
        """Ends a secret: tokens it signed stop working within seconds."""
        return EmbedSecret.from_json(self._send("DELETE", f"/v1/embed-secrets/{_segment(secret_id)}")["embed_secret"])


class CallsResource(_Resource):
    """The account's recent calls (``client.calls``; ``account`` scope)."""

    def list(
        self,
        *,
        analytic: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Calls:
        """A page of the calls of the last 30 days, newest first (served, and failed after running: free).

        ``limit`` 1–100 (default 50); pass the page's ``next_cursor`` as ``cursor`` for older calls.
        """
        query = {"analytic": analytic, "status": status, "limit": limit, "cursor": cursor}
        return Calls.from_json(self._send("GET", "/v1/account/calls", query=query))

    def list_all(
        self,
        *,
        analytic: Optional[str] = None,
        status: Optional[str] = None,
        page_size: int = 100,
    ) -> Iterator[Call]:
        """Every call of ``list`` (newest first, the same filters).

        A generator: it fetches one page of ``page_size`` (1–100, default 100) at a time, as the
        loop asks for more, following ``next_cursor`` until it is null.
        """
        cursor: Optional[str] = None
        while True:
            page = self.list(analytic=analytic, status=status, limit=page_size, cursor=cursor)
            yield from page.items
            # The gateway gives a cursor only when a call older than the page's last exists.
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


class CorsResource(_Resource):
    """Whether your keys may be used from other origins' web pages (``client.cors``; ``account`` scope)."""

    def get(self) -> CorsSettingsCors:
        return CorsSettingsCors.from_json(self._send("GET", "/v1/account/cors")["cors"])

    def set(self, allow_keys_from_browsers: bool) -> CorsSettingsCors:
        """Off by default: a key in a web page is a key anyone can copy; prefer embed tokens."""
        body = {"allow_keys_from_browsers": allow_keys_from_browsers}
        return CorsSettingsCors.from_json(self._send("PUT", "/v1/account/cors", body=body)["cors"])


class ConnectorsResource(_Resource):
    """The warehouse types this gateway connects to (``client.connectors``)."""

    def list(self) -> ConnectorTypes:
        """Each connector type with its config schema and secret fields."""
        return ConnectorTypes.from_json(self._send("GET", "/v1/connectors"))


class ConnectionsResource(_Resource):
    """Your warehouse connections as an owner (``client.connections``; owner scope)."""

    def create(self, name: str, type: str, config: Mapping[str, Any], *, test: bool = True) -> Connection:
        """Saves a connection; the gateway opens a session with it first unless ``test=False``."""
        body = {"name": name, "type": type, "config": dict(config)}
        # A repeat could meet its own first attempt's name: only a refused call is repeated.
        answer = self._send("POST", "/v1/owner/connections", query={"test": _flag(test)}, body=body, idempotent=False)
        return Connection.from_json(answer["connection"])

    def list(self) -> List[Connection]:
        """Your connections (secrets are never returned)."""
        return [Connection.from_json(c) for c in self._send("GET", "/v1/owner/connections")["connections"]]

    def get(self, connection_id: str) -> Dict[str, Any]:
        """One connection and its circuit breaker: ``{"connection": Connection, "circuit": Circuit}``."""
        answer = self._send("GET", f"/v1/owner/connections/{_segment(connection_id)}")
        return {"connection": Connection.from_json(answer["connection"]), "circuit": Circuit.from_json(answer["circuit"])}

    def update(self, connection_id: str, config: Mapping[str, Any], *, test: bool = True) -> Connection:
        """Changes the given config fields (secrets too; None removes one); tested first unless ``test=False``."""
        answer = self._send(
            "PATCH",
            f"/v1/owner/connections/{_segment(connection_id)}",
            query={"test": _flag(test)},
            body={"config": dict(config)},
        )
        return Connection.from_json(answer["connection"])

    def delete(self, connection_id: str, *, force: bool = False) -> ConnectionRemoval:
        """Deletes a connection; refused while analytics use it unless ``force`` (which unlists them)."""
        answer = self._send(
            "DELETE", f"/v1/owner/connections/{_segment(connection_id)}", query={"force": "true" if force else None}
        )
        return ConnectionRemoval.from_json(answer)

    def test(self, connection_id: str) -> Dict[str, Any]:
        """Opens a session to the warehouse: ``{"ok": True, "latency_ms": …}``."""
        # Its answer is the point: a failure is reported, not waited out.
        return self._send("POST", f"/v1/owner/connections/{_segment(connection_id)}/test", idempotent=False)


class ListingsResource(_Resource):
    """Your listings on the marketplace (``client.listings``; owner scope)."""

    def publish(
        self,
        name: str,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        category: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        example_params: Optional[Mapping[str, Any]] = None,
        previews: Optional[bool] = None,
    ) -> OwnerListing:
        """Lists one of your public analytics on the marketplace (or updates its listing)."""
        fields = {
            "title": title,
            "description": description,
            "category": category,
            "tags": None if tags is None else list(tags),
            "example_params": None if example_params is None else dict(example_params),
            "previews": previews,
        }
        body = {k: v for k, v in fields.items() if v is not None}
        answer = self._send("PUT", f"/v1/owner/analytics/{_segment(name)}/listing", body=body)
        return OwnerListing.from_json(answer["listing"])

    def get(self, name: str) -> OwnerListing:
        """Your listing of one analytic, published or not."""
        return OwnerListing.from_json(self._send("GET", f"/v1/owner/analytics/{_segment(name)}/listing")["listing"])

    def unpublish(self, name: str) -> OwnerListing:
        """Takes the listing off the marketplace (the analytic keeps answering its callers)."""
        return OwnerListing.from_json(self._send("DELETE", f"/v1/owner/analytics/{_segment(name)}/listing")["listing"])


class StatementsResource(_Resource):
    """Your earnings as an owner (``client.statements``; owner scope)."""

    def get(self, period: Optional[str] = None) -> OwnerStatement:
        """The statement of a UTC month ``YYYY-MM`` (default: the current one)."""
        return OwnerStatement.from_json(self._send("GET", "/v1/owner/statements", query={"period": period}))


class MarketplaceResource(_Resource):
    """Listed analytics anyone may call (``client.marketplace``)."""

    def search(
        self,
        q: Optional[str] = None,
        *,
        category: Optional[str] = None,
        sort: Optional[str] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[Listing]:
        """Listings matching ``q`` (title, description, name, tags) and ``category``.

        Most popular first (``sort="newest"``: newest first), one page of ``limit`` from ``offset``.
        """
        query = {"q": q, "category": category, "sort": sort, "limit": limit, "offset": offset}
        return [Listing.from_json(item) for item in self._send("GET", "/v1/marketplace/listings", query=query)["items"]]

    def search_all(
        self,
        q: Optional[str] = None,
        *,
        category: Optional[str] = None,
        sort: Optional[str] = None,
        page_size: int = 100,
    ) -> Iterator[Listing]:
        """Every listing matching ``q`` and ``category``, in the order of ``search``.

        A generator: it fetches one page of ``page_size`` (1–100, default 100) at a time, as the
        loop asks for more.
        """
        offset = 0
        while True:
            query = {"q": q, "category": category, "sort": sort, "limit": page_size, "offset": offset or None}
            page = self._send("GET", "/v1/marketplace/listings", query=query)
            items = page["items"]
            for item in items:
                yield Listing.from_json(item)
            offset += len(items)
            # A short or empty page is the last; `total` spares the empty page after a full one.
            if len(items) < page_size or offset >= page["total"]:
                return

    def get(self, name: str) -> ListingDetail:
        """One listing with its params, example request and curl line."""
        return ListingDetail.from_json(self._send("GET", f"/v1/marketplace/listings/{_segment(name)}"))

    def try_token(self, source: str, *, ttl_seconds: Optional[int] = None) -> TryToken:
        """A try-token for free previews of one listed analytic (or one of your own).

        Valid ``ttl_seconds`` (1–300, default 300): make a client with it as ``api_key`` and query.
        """
        body: Dict[str, Any] = {"source": source}
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        return TryToken.from_json(self._send("POST", "/v1/marketplace/try-token", body=body))


class OwnerAnalytics(_Resource):
    """Your analytics as an owner: the methods of ``client.analytics`` beside ``get`` (owner scope)."""

    def list(self) -> List[Analytic]:
        """Your analytics at their current versions."""
        return [Analytic.from_json(a) for a in self._send("GET", "/v1/owner/analytics")["analytics"]]

    def create(self, definition: Mapping[str, Any], *, check: bool = True) -> Analytic:
        """Creates an analytic (a ConflictError when the name is taken).

        ``definition`` is as an owner writes it (``name``, ``connection``, ``sql``, ``params`` …);
        the SQL is tried against the warehouse first unless ``check=False``.
        """
        answer = self._send(
            "POST", "/v1/owner/analytics", query={"check": _flag(check)}, body=dict(definition), idempotent=False
        )
        return Analytic.from_json(answer["analytic"])

    def deploy(self, definition: Mapping[str, Any], *, check: bool = True) -> Dict[str, Any]:
        """Creates the analytic, adds a version when its definition changed, or changes nothing.

        Returns ``{"outcome": "created" | "updated" | "unchanged", "analytic": Analytic}``.
        """
        name = definition.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("An analytic definition needs a name.")
        answer = self._send(
            "PUT", f"/v1/owner/analytics/{_segment(name)}", query={"check": _flag(check)}, body=dict(definition)
        )
        return {"outcome": answer["outcome"], "analytic": Analytic.from_json(answer["analytic"])}

    def dry_run(self, definition: Mapping[str, Any]) -> Dict[str, Any]:
        """Runs every check of a deploy (the SQL included) and says what it would do; nothing is saved.

        Returns ``{"name", "outcome", "definition", "columns"?}`` as the gateway sent it.
        """
        name = definition.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("An analytic definition needs a name.")
        return self._send("POST", f"/v1/owner/analytics/{_segment(name)}/dry-run", body=dict(definition))

    def update(self, name: str, definition: Mapping[str, Any]) -> Analytic:
        """Replaces the definition of one of your analytics with a whole new one: always a new version."""
        # A repeat adds a version with the same definition: only a refused call is repeated.
        answer = self._send("PATCH", f"/v1/owner/analytics/{_segment(name)}", body=dict(definition), idempotent=False)
        return Analytic.from_json(answer["analytic"])

    def describe(self, name: str, *, version: Optional[int] = None) -> Analytic:
        """One of your analytics, at its current version or at ``version``."""
        answer = self._send("GET", f"/v1/owner/analytics/{_segment(name)}", query={"version": version})
        return Analytic.from_json(answer["analytic"])

    def versions(self, name: str) -> List[AnalyticVersion]:
        """Every kept version (``version``, ``definition``, ``price``, ``deprecation``, ``created_at``…)."""
        answer = self._send("GET", f"/v1/owner/analytics/{_segment(name)}/versions")
        return [AnalyticVersion.from_json(item) for item in answer["versions"]]

    def deprecate(self, name: str, version: int, *, sunset: str) -> DeprecatedVersion:
        """Deprecates a version callers pin (not the current one).

        Its calls carry ``Deprecation`` and ``Sunset`` headers and are refused from ``sunset`` on
        (an ISO 8601 time, at most 366 days ahead). Setting it again moves the sunset.
        """
        path = f"/v1/owner/analytics/{_segment(name)}/versions/{int(version)}/deprecation"
        answer = self._send("PUT", path, body={"sunset": sunset})
        return DeprecatedVersion.from_json(answer["deprecated_version"])

    def undeprecate(self, name: str, version: int) -> None:
        """Withdraws a version's deprecation."""
        self._send("DELETE", f"/v1/owner/analytics/{_segment(name)}/versions/{int(version)}/deprecation")

    def delete(self, name: str) -> None:
        """Deletes one of your analytics (its name becomes free)."""
        self._send("DELETE", f"/v1/owner/analytics/{_segment(name)}")

    def purge_cache(self, name: str) -> None:
        """Drops the cached answers of one of your analytics on every gateway instance."""
        self._send("DELETE", f"/v1/owner/analytics/{_segment(name)}/cache")
