"""Unit tests of the retry policy, the error mapping and the query string (no network)."""
from __future__ import annotations

import builtins
import unittest

import quarry_client as quarry
from quarry_client.errors import error_from_response
from quarry_client.retry import RetryPolicy, retry_delay
from quarry_client.transport import _query_string


def envelope(code: str, **extra: object) -> bytes:
    import json

    return json.dumps({"error": {"code": code, "message": "m", "request_id": "req_1", **extra}}).encode()


class ErrorMappingTest(unittest.TestCase):
    def test_each_code_maps_to_its_family(self) -> None:
        for code, family in [
            ("INVALID_PARAMS", quarry.InvalidParamsError),
            ("SOURCE_NOT_FOUND", quarry.NotFoundError),
            ("QUOTA_EXCEEDED", quarry.QuotaExceededError),
            ("SOURCE_UNAVAILABLE", quarry.SourceUnavailableError),
            ("QUERY_TIMEOUT", quarry.QueryTimeoutError),
            ("RESULT_TOO_LARGE", quarry.ResultTooLargeError),
        ]:
            error = error_from_response(400, {}, envelope(code))
            self.assertIsInstance(error, family, code)
            self.assertEqual((error.code, error.request_id), (code, "req_1"))

    def test_envelope_fields_and_header_fallbacks(self) -> None:
        error = error_from_response(
            429, {"retry-after": "3"}, envelope("RATE_LIMIT_EXCEEDED", details=[{"param": "year", "message": "bad"}])
        )
        self.assertIsInstance(error, quarry.RateLimitError)
        self.assertEqual(error.retry_after, 3.0)
        self.assertEqual(error.details, [quarry.ErrorDetail(message="bad", param="year")])
        oauth = error_from_response(401, {}, b'{"error": "invalid_client"}')
        self.assertIsInstance(oauth, quarry.OAuthError)
        self.assertEqual(oauth.code, "invalid_client")
        plain = error_from_response(500, {"x-request-id": "req_2"}, b"<html>")
        self.assertEqual((type(plain), plain.code, plain.request_id), (quarry.QuarryError, "HTTP_ERROR", "req_2"))

    def test_timeout_error_is_also_the_builtin(self) -> None:
        self.assertTrue(issubclass(quarry.TimeoutError, builtins.TimeoutError))
        self.assertTrue(issubclass(quarry.TimeoutError, quarry.QuarryError))


class RetryPolicyTest(unittest.TestCase):
    policy = RetryPolicy(retries=3, base_delay=0.25, max_delay=30)

    def test_waits_retry_after_plus_jitter(self) -> None:
        error = quarry.RateLimitError("RATE_LIMIT_EXCEEDED", 429, "m", retry_after=1.5)
        self.assertEqual(retry_delay(error, 0, False, self.policy, rand=lambda: 0.0), 1.5)
        self.assertEqual(retry_delay(error, 2, False, self.policy, rand=lambda: 1.0), 2.5)

    def test_never_retries_quota_other_4xx_or_past_the_budget(self) -> None:
        quota = quarry.QuotaExceededError("QUOTA_EXCEEDED", 429, "m", retry_after=10)
        self.assertIsNone(retry_delay(quota, 0, True, self.policy))
        self.assertIsNone(retry_delay(quarry.InvalidParamsError("INVALID_PARAMS", 400, "m"), 0, True, self.policy))
        late = quarry.RateLimitError("RATE_LIMIT_EXCEEDED", 429, "m", retry_after=31)
        self.assertIsNone(retry_delay(late, 0, True, self.policy))
        limited = quarry.RateLimitError("RATE_LIMIT_EXCEEDED", 429, "m", retry_after=1)
        self.assertIsNone(retry_delay(limited, 3, True, self.policy))

    def test_network_errors_only_on_idempotent_calls(self) -> None:
        network = quarry.NetworkError("NETWORK_ERROR", 0, "m")
        self.assertIsNotNone(retry_delay(network, 0, True, self.policy))
        self.assertIsNone(retry_delay(network, 0, False, self.policy))


class QueryStringTest(unittest.TestCase):
    def test_lists_repeat_keys_and_none_is_left_out(self) -> None:
        self.assertEqual(
            _query_string({"tags": ["a", "b c"], "year": 2024, "on": True, "region": None}),
            "tags=a&tags=b+c&year=2024&on=true",
        )


if __name__ == "__main__":
    unittest.main()
