"""Plays the shared conformance cases (clients/conformance/cases) with this client.

The rules are in clients/conformance/README.md; every official client's runner implements them.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

import quarry_client as quarry

CASES_DIR = Path(__file__).resolve().parents[2] / "conformance" / "cases"


def load_cases() -> List[Dict[str, Any]]:
    """Every case in file-name order, each with its ``name``."""
    return [{"name": p.stem, **json.loads(p.read_text("utf-8"))} for p in sorted(CASES_DIR.glob("*.json"))]


def fixture() -> Any:
    """The harness's QUARRY_CONFORMANCE, or None when the suite runs on its own."""
    raw = os.environ.get("QUARRY_CONFORMANCE")
    return json.loads(raw) if raw else None


def resolve(value: Any, saved: Dict[str, Any]) -> Any:
    """Replaces ``$name.field`` strings with what earlier steps saved."""
    if isinstance(value, str) and value.startswith("$"):
        name, *fields = value[1:].split(".")
        current = saved.get(name)
        for f in fields:
            current = current.get(f) if isinstance(current, dict) else None
        return current
    if isinstance(value, list):
        return [resolve(v, saved) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, saved) for k, v in value.items()}
    return value


def plain(value: Any) -> Any:
    """A result as plain JSON-like values (dataclasses become dicts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def match(expected: Any, actual: Any, path: str = "$") -> List[str]:
    """Every difference between ``expected`` and ``actual``; empty when they match."""
    if expected == "<nonempty>":
        return [] if isinstance(actual, str) and actual else [f"{path}: expected a non-empty string, got {actual!r}"]
    if expected == "<number>":
        return [] if _is_number(actual) else [f"{path}: expected a number, got {actual!r}"]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected a list of {len(expected)}, got {actual!r}"]
        return [p for i, e in enumerate(expected) for p in match(e, actual[i], f"{path}[{i}]")]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        return [
            p
            for k, v in expected.items()
            for p in (match(v, actual[k], f"{path}.{k}") if k in actual else [f"{path}.{k}: missing"])
        ]
    if _is_number(expected):
        return [] if _is_number(actual) and actual == expected else [f"{path}: expected {expected!r}, got {actual!r}"]
    same = type(expected) is type(actual) and expected == actual
    return [] if same else [f"{path}: expected {expected!r}, got {actual!r}"]


class CaseRunner:
    """Plays one case against the harness's proxy with this client."""

    def __init__(self, fx: Dict[str, Any], case: Dict[str, Any]) -> None:
        self.fx = fx
        self.case = case
        # Cases name a runner's own analytics as "$fixture.sources.<name>".
        self.saved: Dict[str, Any] = {"fixture": fx}
        self.base_url = f"{fx['base_url']}/{case['name']}"
        self.shared = self._client(fx["credentials"][case["credential"]], case.get("client", {}))

    def _client(self, credential: Dict[str, str], settings: Dict[str, Any]) -> quarry.QuarryClient:
        retry = quarry.RetryPolicy(retries=settings.get("retries", 3))
        timeout = settings.get("timeout_seconds", 10)
        if "api_key" in credential:
            return quarry.QuarryClient(self.base_url, api_key=credential["api_key"], timeout=timeout, retry=retry)
        oauth = quarry.OAuthCredentials(credential["client_id"], credential["client_secret"])
        return quarry.QuarryClient(self.base_url, oauth=oauth, timeout=timeout, retry=retry)

    def _client_for(self, step: Dict[str, Any]) -> quarry.QuarryClient:
        if "client" not in step and "credential" not in step:
            return self.shared
        credential = self.fx["credentials"][self.case["credential"]]
        if "credential" in step:
            credential = {"api_key": resolve(step["credential"], self.saved)}
        return self._client(credential, {**self.case.get("client", {}), **step.get("client", {})})

    def _perform(self, client: quarry.QuarryClient, op: str, args: Dict[str, Any]) -> Any:
        if op == "query":
            return client.query(args["source"], args["params"], max_credits=args.get("max_credits"))
        if op == "analytics.get":
            return client.analytics.get(args["name"], args["params"])
        if op == "keys.create":
            return client.keys.create(args["name"], scopes=args.get("scopes"))
        if op == "keys.list":
            return client.keys.list()
        if op == "keys.revoke":
            return client.keys.revoke(args["id"])
        if op == "usage":
            return client.usage.get()
        if op == "marketplace.searchAll":
            return list(client.marketplace.search_all(args.get("q"), category=args.get("category"), page_size=args.get("page_size", 100)))
        if op == "marketplace.search":
            return client.marketplace.search(args.get("q"), category=args.get("category"))
        if op == "marketplace.get":
            return client.marketplace.get(args["name"])
        if op == "marketplace.tryToken":
            return client.marketplace.try_token(args["source"], ttl_seconds=args.get("ttl_seconds"))
        if op == "connections.create":
            return client.connections.create(args["name"], args["type"], args["config"])
        if op == "analytics.deploy":
            return client.analytics.deploy(args["definition"])
        if op == "listings.publish":
            return client.listings.publish(args["name"], **args.get("listing", {}))
        if op == "statements.get":
            return client.statements.get(args.get("period"))
        if op == "budget.get":
            return client.budget.get()
        if op == "budget.set":
            return client.budget.set(args["budget_usd"])
        if op == "tools.list":
            return client.tools.list()
        if op == "tools.add":
            return client.tools.add(args["name"])
        if op == "tools.remove":
            return client.tools.remove(args["name"])
        if op == "mcp.get":
            return client.mcp.get()
        if op == "mcp.set":
            return client.mcp.set(args["max_credits"])
        if op == "account.get":
            return client.account.get()
        if op == "account.setPassword":
            return client.account.set_password(args["password"])
        if op == "plans.list":
            return client.plans.list()
        if op == "billing.get":
            return client.billing.get()
        if op == "billing.checkout":
            return client.billing.checkout(args["plan"])
        if op == "billing.portal":
            return client.billing.portal()
        if op == "payouts.onboarding":
            return client.payouts.onboarding()
        if op == "payouts.account":
            return client.payouts.account()
        if op == "payouts.list":
            return client.payouts.list()
        if op == "embedTokens.create":
            return client.embed_tokens.create(
                args["analytics"], origins=args.get("origins"), expires_in=args.get("expires_in")
            )
        if op == "embedSecrets.create":
            return client.embed_secrets.create(args["name"])
        if op == "embedSecrets.list":
            return client.embed_secrets.list()
        if op == "embedSecrets.rotate":
            return client.embed_secrets.rotate(args["id"], overlap_seconds=args.get("overlap_seconds"))
        if op == "embedSecrets.revoke":
            return client.embed_secrets.revoke(args["id"])
        if op == "cors.get":
            return client.cors.get()
        if op == "cors.set":
            return client.cors.set(args["allow_keys_from_browsers"])
        if op == "oauthClients.create":
            return client.oauth_clients.create(args["name"], scopes=args.get("scopes"))
        if op == "oauthClients.list":
            return client.oauth_clients.list()
        if op == "oauthClients.revoke":
            return client.oauth_clients.revoke(args["id"])
        if op == "connectors.list":
            return client.connectors.list().connectors
        if op == "connections.list":
            return client.connections.list()
        if op == "connections.get":
            return client.connections.get(args["id"])
        if op == "connections.test":
            return client.connections.test(args["id"])
        if op == "connections.update":
            return client.connections.update(args["id"], args["config"])
        if op == "connections.delete":
            return client.connections.delete(args["id"])
        if op == "analytics.dryRun":
            return client.analytics.dry_run(args["definition"])
        if op == "analytics.create":
            return client.analytics.create(args["definition"])
        if op == "analytics.update":
            return client.analytics.update(args["name"], args["definition"])
        if op == "analytics.describe":
            return client.analytics.describe(args["name"], version=args.get("version"))
        if op == "calls.list":
            return client.calls.list(analytic=args.get("analytic"), status=args.get("status"), limit=args.get("limit"))
        if op == "calls.listAll":
            return list(
                client.calls.list_all(analytic=args.get("analytic"), status=args.get("status"), page_size=args.get("page_size", 100))
            )
        if op == "analytics.versions":
            return client.analytics.versions(args["name"])
        if op == "analytics.deprecate":
            return client.analytics.deprecate(args["name"], args["version"], sunset=args["sunset"])
        if op == "analytics.undeprecate":
            return client.analytics.undeprecate(args["name"], args["version"])
        if op == "analytics.list":
            return client.analytics.list()
        if op == "analytics.purgeCache":
            return client.analytics.purge_cache(args["name"])
        if op == "analytics.delete":
            return client.analytics.delete(args["name"])
        if op == "listings.get":
            return client.listings.get(args["name"])
        if op == "listings.unpublish":
            return client.listings.unpublish(args["name"])
        if op == "signUp":
            return quarry.sign_up(self.base_url, email=args["email"], name=args["name"])
        if op == "sleep":
            time.sleep(args["seconds"])
            return None
        raise ValueError(f"unknown op {op}")

    def _check_error(self, want: Dict[str, Any], error: BaseException) -> List[str]:
        if not isinstance(error, quarry.QuarryError):
            return [f"expected a {want['family']} error, got {error!r}"]
        problems = []
        family = getattr(quarry, f"{want['family']}Error", None)
        if family is None or not isinstance(error, family):
            problems.append(f"expected the {want['family']} family, got {type(error).__name__} {error}")
        if "code" in want and error.code != want["code"]:
            problems.append(f"code {error.code}")
        if "status" in want and error.status != want["status"]:
            problems.append(f"status {error.status}")
        if not error.message:
            problems.append("an empty message")
        if want.get("request_id") and not error.request_id:
            problems.append("no request id")
        if want.get("retry_after") == "positive" and not (error.retry_after or 0) > 0:
            problems.append(f"retry_after {error.retry_after}")
        for param in want.get("detail_params", []):
            if not any(d.param == param for d in error.details):
                problems.append(f"no detail for param {param}")
        for name, value in want.get("detail_values", {}).items():
            detail = next((d for d in error.details if name in (d.field, d.param)), None)
            if detail is None or detail.value != value:
                problems.append(f"detail {name}: value {detail and detail.value!r}, expected {value}")
        if want.get("text_names_code_and_request_id"):
            text = str(error)
            if error.code not in text or not error.request_id or error.request_id not in text:
                problems.append(f"the error's text names not its code and request id: {text}")
        return problems

    def _check_result(self, expect: Dict[str, Any], result: Any) -> List[str]:
        if "error" in expect:
            return [f"expected a {expect['error']['family']} error, got a result"]
        problems = []
        value = plain(result)
        if "result" in expect:
            problems += match(resolve(expect["result"], self.saved), value)
        if "contains" in expect:
            wanted = resolve(expect["contains"], self.saved)
            if not any(not match(wanted, item) for item in value or []):
                problems.append(f"no item matches {wanted!r} in {value!r}")
        if "absent_field" in expect:
            field = expect["absent_field"]
            if any(isinstance(i, dict) and i.get(field) is not None for i in value or []):
                problems.append(f"an item has the field {field}")
        if "usage_since" in expect:
            since = expect["usage_since"]
            before = self.saved[since["saved"]]["totals"]
            calls = value["totals"]["calls"] - before["calls"]
            credits = value["totals"]["credits"] - before["credits"]
            if calls != since["calls"] or credits != since["credits"]:
                problems.append(f"usage grew by {calls} calls and {credits} credits")
        return problems

    def run(self) -> List[str]:
        """Plays every step, then the proxy's traffic check; returns the problems found."""
        problems: List[str] = []
        for index, step in enumerate(self.case["steps"]):
            expect = step.get("expect", {})
            started = time.monotonic()
            try:
                result = self._perform(self._client_for(step), step["op"], resolve(step.get("input", {}), self.saved))
                if "save" in step:
                    self.saved[step["save"]] = plain(result)
                found = self._check_result(expect, result)
            except quarry.QuarryError as error:
                found = self._check_error(expect["error"], error) if "error" in expect else [f"unexpected {error!r}: {error}"]
            elapsed = time.monotonic() - started
            if "max_seconds" in step and elapsed > step["max_seconds"]:
                found.append(f"took {elapsed:.2f} s, more than {step['max_seconds']} s")
            problems += [f"step {index} ({step['op']}): {p}" for p in found]
        with urllib.request.urlopen(f"{self.fx['check_url']}/{self.case['name']}", timeout=10) as answer:
            check = json.loads(answer.read())
        problems += [f"traffic: {p}" for p in check["problems"]]
        return problems
