"""calls.list_all: every page of the account's recent calls, fetched lazily (no network)."""
from __future__ import annotations

import itertools
import unittest
from typing import Any, List

import quarry_client as quarry
from quarry_client.resources import CallsResource
from quarry_client.transport import ApiRequest, _query_string


class FakeCalls:
    """Plays GET /v1/account/calls: `total` calls newest first (r0 the newest), paged by a cursor."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.requests: List[str] = []

    def send(self, request: ApiRequest) -> Any:
        self.requests.append(f"{request.method} {request.path}?{_query_string(request.query)}")
        query = request.query or {}
        limit = query.get("limit") or 50
        cursor = query.get("cursor")
        start = 0 if cursor is None else int(cursor.replace("after-r", "")) + 1
        end = min(start + limit, self.total)
        items = [
            {"request_id": f"r{i}", "analytic": query.get("analytic") or "sales", "status": "ok", "credits": 1, "at": "t"}
            for i in range(start, end)
        ]
        return {"items": items, "next_cursor": f"after-r{end - 1}" if end < self.total else None}


class CallsListAllTest(unittest.TestCase):
    def test_follows_next_cursor_through_every_page_and_stops_when_it_is_null(self) -> None:
        gateway = FakeCalls(5)
        calls = list(CallsResource(gateway).list_all(analytic="sales", status="ok", page_size=2))
        self.assertEqual([c.request_id for c in calls], ["r0", "r1", "r2", "r3", "r4"])
        self.assertTrue(all(isinstance(c, quarry.Call) for c in calls))
        self.assertEqual(
            gateway.requests,
            [
                "GET /v1/account/calls?analytic=sales&status=ok&limit=2",
                "GET /v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r1",
                "GET /v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r3",
            ],
        )

    def test_fetches_lazily_only_the_pages_the_loop_used(self) -> None:
        gateway = FakeCalls(250)
        every = CallsResource(gateway).list_all()
        self.assertEqual(gateway.requests, [])
        self.assertEqual(len(list(itertools.islice(every, 150))), 150)
        # The default page is the largest the gateway gives: 100.
        self.assertEqual(
            gateway.requests,
            ["GET /v1/account/calls?limit=100", "GET /v1/account/calls?limit=100&cursor=after-r99"],
        )

    def test_yields_nothing_when_there_are_no_calls_after_one_request(self) -> None:
        gateway = FakeCalls(0)
        self.assertEqual(list(CallsResource(gateway).list_all(analytic="none")), [])
        self.assertEqual(len(gateway.requests), 1)


if __name__ == "__main__":
    unittest.main()
