"""QuarryClient: the Python client for a Quarry gateway (queries, analytics, keys, usage)."""
from __future__ import annotations

import secrets
import urllib.parse
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

from . import api_models
from .api_models import Account
from .models import ApiKey, QueryResult
from .oauth import OAuthCredentials, TokenSource
from .resources import (
    AccountResource,
    AlertsResource,
    BillingResource,
    BudgetResource,
    ConnectionsResource,
    ConnectorsResource,
    ListingsResource,
    MarketplaceResource,
    McpResource,
    CallsResource,
    CorsResource,
    EmbedSecretsResource,
    EmbedTokensResource,
    OAuthClientsResource,
    OwnerAnalytics,
    PayoutsResource,
    PlansResource,
    StatementsResource,
    ToolsResource,
    JobsResource,
    WebhooksResource,
)
from .retry import RetryPolicy
from .transport import ApiRequest, Transport

__all__ = ["QuarryClient", "sign_up"]

_USER_AGENT = "quarry-client-python/0.1.0"


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


class Analytics(OwnerAnalytics):
    """Runs analytics with query-string params, and manages your own (``client.analytics``)."""

    def get(
        self,
        name: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        no_cache: bool = False,
        max_credits: Optional[int] = None,
    ) -> QueryResult:
        """Runs ``name`` with ``GET /v1/analytics/<name>``: lists become repeated keys, the gateway coerces values.

        ``max_credits`` goes beside the params (the gateway reserves the name): a call costing more
        raises ``PriceAboveLimitError``, nothing run or charged.
        """
        headers = {"Cache-Control": "no-cache"} if no_cache else {}
        query = dict(params or {})
        if max_credits is not None:
            query["max_credits"] = max_credits
        body = self._transport.send(
            ApiRequest("GET", f"/v1/analytics/{_segment(name)}", query=query, headers=headers)
        )
        return QueryResult.from_json(body)


class Keys:
    """Your account's API keys (``client.keys``; needs the ``keys`` scope)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(self, name: str, scopes: Optional[Sequence[str]] = None, expires_at: Optional[str] = None) -> ApiKey:
        """A new key; its ``secret`` is shown this once. Default scopes: all of yours."""
        body: Dict[str, Any] = {"name": name}
        if scopes is not None:
            body["scopes"] = list(scopes)
        if expires_at is not None:
            body["expires_at"] = expires_at
        # Two attempts could make two keys: only a refused (rate-limited) call is repeated.
        answer = self._transport.send(ApiRequest("POST", "/v1/keys", body=body, idempotent=False))
        return ApiKey.from_json(answer["key"])

    def list(self) -> List[ApiKey]:
        """Every key of the account, revoked ones included (never a secret)."""
        answer = self._transport.send(ApiRequest("GET", "/v1/keys"))
        return [ApiKey.from_json(k) for k in answer["keys"]]

    def revoke(self, key_id: str) -> ApiKey:
        """Revokes a key; every gateway instance refuses it within seconds."""
        answer = self._transport.send(ApiRequest("DELETE", f"/v1/keys/{_segment(key_id)}"))
        return ApiKey.from_json(answer["key"])


class Usage:
    """Your account's usage (``client.usage``)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def get(self, period: Optional[str] = None) -> api_models.Usage:
        """``GET /v1/account/usage``: plan, totals (calls, credits used and left, amount due), budget, by analytic and by day.

        ``period`` is a UTC month ``YYYY-MM`` (default: the current one).
        """
        return api_models.Usage.from_json(
            self._transport.send(ApiRequest("GET", "/v1/account/usage", query={"period": period}))
        )


class QuarryClient:
    """A client for one Quarry gateway, authenticated by an API key or an OAuth client.

    Args:
        base_url: the gateway, e.g. ``http://127.0.0.1:8787`` (a path prefix is kept).
        api_key: an API key (``qry_live_…``); or
        oauth: an OAuth client's credentials (client-credentials grant).
        timeout: seconds for a whole call, retries and waits included (default 120; None: none).
        retry: the retry policy (default: 3 retries, 0.25 s base, 30 s max).
        user_agent: the User-Agent header.

    Thread-safe: share one client.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        oauth: Optional[OAuthCredentials] = None,
        timeout: Optional[float] = 120.0,
        retry: RetryPolicy = RetryPolicy(),
        user_agent: str = _USER_AGENT,
    ) -> None:
        scheme = urllib.parse.urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            raise ValueError(f"base_url must be an absolute http(s) URL such as http://127.0.0.1:8787, got {base_url!r}")
        if (api_key is None) == (oauth is None) or api_key == "":
            raise ValueError("Give exactly one of api_key (qry_live_…) or oauth (client_id, client_secret).")
        tokens: Optional[TokenSource] = None
        transport_holder: List[Transport] = []
        if oauth is not None:
            tokens = TokenSource(
                base_url.rstrip("/") + "/oauth/token",
                oauth,
                lambda url, body, headers, t: transport_holder[0].raw("POST", url, body, {**headers, "User-Agent": user_agent}, t),
            )
        self._transport = Transport(base_url, api_key, tokens, timeout, retry, user_agent)
        transport_holder.append(self._transport)
        #: Runs analytics with query-string params.
        self.analytics = Analytics(self._transport)
        #: Creates, lists and revokes API keys.
        self.keys = Keys(self._transport)
        #: Reads the account's usage.
        self.usage = Usage(self._transport)
        #: The account: read it, set the console password.
        self.account = AccountResource(self._transport)
        #: Pay as you Go: the budget of a period.
        self.budget = BudgetResource(self._transport)
        #: Webhook endpoints: signed events out, their delivery log.
        self.jobs = JobsResource(self._transport)
        self.webhooks = WebhooksResource(self._transport)
        #: The account's alert thresholds.
        self.alerts = AlertsResource(self._transport)
        #: The account's agent tools: what its agents may call on /mcp.
        self.tools = ToolsResource(self._transport)
        #: The account's MCP settings: the default price limit of a tool call.
        self.mcp = McpResource(self._transport)
        #: The plans on offer.
        self.plans = PlansResource(self._transport)
        #: The plan, subscription, card and invoices.
        self.billing = BillingResource(self._transport)
        #: Being paid as an owner.
        self.payouts = PayoutsResource(self._transport)
        #: OAuth clients of the account.
        self.oauth_clients = OAuthClientsResource(self._transport)
        #: Embed tokens for web pages (mint them on your server).
        self.embed_tokens = EmbedTokensResource(self._transport)
        #: HS256 secrets to mint embed tokens offline.
        self.embed_secrets = EmbedSecretsResource(self._transport)
        #: The account's recent calls.
        self.calls = CallsResource(self._transport)
        #: Whether your keys may be used from other origins' web pages.
        self.cors = CorsResource(self._transport)
        #: The warehouse types this gateway connects to.
        self.connectors = ConnectorsResource(self._transport)
        #: Your warehouse connections (owner).
        self.connections = ConnectionsResource(self._transport)
        #: Your marketplace listings (owner).
        self.listings = ListingsResource(self._transport)
        #: Your earnings statements (owner).
        self.statements = StatementsResource(self._transport)
        #: Listed analytics: search, details, try-tokens for free previews.
        self.marketplace = MarketplaceResource(self._transport)

    def query(
        self,
        source: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        no_cache: bool = False,
        idempotency_key: Optional[str] = None,
        max_credits: Optional[int] = None,
    ) -> QueryResult:
        """Runs an analytic with typed params (``POST /v1/query``).

        Sends an ``Idempotency-Key`` (default: a random one per call), the same on every retry,
        so a repeated query is answered and charged once. ``no_cache`` bypasses the result cache.
        ``max_credits``: a call that would cost more raises ``PriceAboveLimitError`` (409
        ``PRICE_ABOVE_LIMIT``), nothing run or charged.
        """
        headers = {"Idempotency-Key": idempotency_key or f"qc-{secrets.token_hex(16)}"}
        if no_cache:
            headers["Cache-Control"] = "no-cache"
        request: Dict[str, Any] = {"source": source, "params": dict(params or {})}
        if max_credits is not None:
            request["max_credits"] = max_credits
        body = self._transport.send(ApiRequest("POST", "/v1/query", body=request, headers=headers))
        return QueryResult.from_json(body)


    def pages(
        self,
        source: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        page_size: int = 10_000,
        no_cache: bool = False,
        max_credits: Optional[int] = None,
    ) -> Iterator[QueryResult]:
        """Runs an analytic once and yields its result page by page (``page_size`` rows, 1–10,000).

        One warehouse query and one charge: the first page is charged, the following ones are read
        from the gateway's snapshot with ``meta.next`` and are free. A snapshot gone midway raises
        a ``QuarryError`` with code ``CURSOR_EXPIRED`` (410): rerun to start over.
        """
        request: Dict[str, Any] = {"source": source, "params": dict(params or {}), "page_size": page_size}
        if max_credits is not None:
            request["max_credits"] = max_credits
        first = True
        while True:
            headers = {"Idempotency-Key": f"qc-{secrets.token_hex(16)}"}
            if no_cache and first:
                headers["Cache-Control"] = "no-cache"
            body = self._transport.send(ApiRequest("POST", "/v1/query", body=request, headers=headers))
            page = QueryResult.from_json(body)
            yield page
            first = False
            if not page.meta.next:
                return
            request = {"source": source, "cursor": page.meta.next}


def sign_up(
    base_url: str,
    *,
    email: str,
    name: str,
    timeout: Optional[float] = 120.0,
    retry: RetryPolicy = RetryPolicy(),
    user_agent: str = _USER_AGENT,
) -> Dict[str, Any]:
    """Signs up an account (``POST /v1/accounts``, no credential needed).

    Returns ``{"account": Account, "key": ApiKey}``: the key's ``secret`` is shown this once.
    Not repeated after a failure that may have created the account.
    """
    transport = Transport(base_url, None, None, timeout, retry, user_agent)
    answer = transport.send(ApiRequest("POST", "/v1/accounts", body={"email": email, "name": name}, idempotent=False))
    return {"account": Account.from_json(answer["account"]), "key": ApiKey.from_json(answer["key"])}
