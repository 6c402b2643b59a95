"""analytics.versions: the generated AnalyticVersion models (no network)."""
from __future__ import annotations

import unittest
from typing import Any, List

import quarry_client as quarry
from quarry_client.client import Analytics
from quarry_client.transport import ApiRequest

DEFINITION = {"name": "sales", "connection": "demo", "sql": "SELECT 1"}
VERSIONS = [
    {
        "version": 1,
        "definition": DEFINITION,
        "price": 1,
        "scheduled_price": None,
        "price_effective_at": None,
        "deprecation": {"deprecated_at": "2026-11-01T00:00:00.000Z", "sunset": "2027-01-01T00:00:00.000Z"},
        "created_at": "2026-10-01T00:00:00.000Z",
    },
    {"version": 2, "definition": DEFINITION, "price": 2, "deprecation": None, "created_at": "2026-11-01T00:00:00.000Z"},
]


class FakeGateway:
    def __init__(self) -> None:
        self.requests: List[str] = []

    def send(self, request: ApiRequest) -> Any:
        self.requests.append(f"{request.method} {request.path}")
        return {"versions": VERSIONS}


class AnalyticVersionsTest(unittest.TestCase):
    def test_versions_are_analytic_version_models(self) -> None:
        gateway = FakeGateway()
        versions = Analytics(gateway).versions("sales/by region")
        self.assertEqual(gateway.requests, ["GET /v1/owner/analytics/sales%2Fby%20region/versions"])
        self.assertEqual([type(v) for v in versions], [quarry.AnalyticVersion, quarry.AnalyticVersion])
        first, second = versions
        self.assertEqual((first.version, first.price, first.created_at), (1, 1, "2026-10-01T00:00:00.000Z"))
        self.assertIsInstance(first.deprecation, quarry.VersionDeprecation)
        self.assertEqual(first.deprecation.sunset, "2027-01-01T00:00:00.000Z")
        self.assertEqual((second.version, second.price, second.deprecation), (2, 2, None))
        self.assertEqual(second.definition, DEFINITION)
        self.assertEqual(second.raw, VERSIONS[1])


if __name__ == "__main__":
    unittest.main()
