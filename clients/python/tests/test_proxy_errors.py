"""A proxy's error page in front of the gateway, and what an error says (no network)."""
from __future__ import annotations

import unittest

import quarry_client as quarry
from quarry_client.errors import error_from_response

PAGE = b"<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"


class ProxyErrorPageTest(unittest.TestCase):
    def test_non_json_502_503_504_are_the_upstream_and_unavailable_families(self) -> None:
        for status, family in [
            (502, quarry.UpstreamError),
            (503, quarry.SourceUnavailableError),
            (504, quarry.UpstreamError),
        ]:
            error = error_from_response(status, {"x-request-id": "req_proxy"}, PAGE)
            self.assertIsInstance(error, family, status)
            self.assertEqual((error.status, error.request_id), (status, "req_proxy"))
            self.assertIn(str(status), str(error))

    def test_other_non_json_answers_stay_the_base_error(self) -> None:
        error = error_from_response(500, {}, PAGE)
        self.assertIs(type(error), quarry.QuarryError)

    def test_the_message_names_the_code_and_the_request_id(self) -> None:
        error = error_from_response(
            429, {}, b'{"error": {"code": "RATE_LIMIT_EXCEEDED", "message": "slow down", "request_id": "req_42"}}'
        )
        self.assertIn("RATE_LIMIT_EXCEEDED", str(error))
        self.assertIn("req_42", str(error))


if __name__ == "__main__":
    unittest.main()
