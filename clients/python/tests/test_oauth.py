"""Unit tests of the OAuth token source with a fake clock and token endpoint (no network)."""
from __future__ import annotations

import json
import unittest

import quarry_client as quarry
from quarry_client.oauth import TokenSource


class TokenSourceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.clock = 0.0
        self.sent = []

        def send(url, body, headers, timeout):
            self.sent.append((url, body, headers["Authorization"]))
            token = f"tok-{len(self.sent)}"
            return 200, {}, json.dumps({"access_token": token, "token_type": "Bearer", "expires_in": 100}).encode()

        creds = quarry.OAuthCredentials("qci_a b", "qcs_secret", scope=["query", "keys"])
        self.tokens = TokenSource("http://gw/oauth/token", creds, send, now=lambda: self.clock)

    def test_reuses_the_token_and_refreshes_it_before_it_expires(self) -> None:
        self.assertEqual(self.tokens.token(5), "tok-1")
        self.clock = 89.0
        self.assertEqual(self.tokens.token(5), "tok-1")
        self.clock = 90.5  # a tenth of its 100 s life before expiry
        self.assertEqual(self.tokens.token(5), "tok-2")
        self.assertEqual(len(self.sent), 2)
        url, body, authorization = self.sent[0]
        self.assertEqual(body, b"grant_type=client_credentials&scope=query+keys")
        self.assertEqual(authorization, "Basic cWNpX2ErYjpxY3Nfc2VjcmV0")  # qci_a+b:qcs_secret

    def test_invalidate_forgets_only_the_refused_token(self) -> None:
        self.assertEqual(self.tokens.token(5), "tok-1")
        self.tokens.invalidate("some-other-token")
        self.assertEqual(self.tokens.token(5), "tok-1")
        self.tokens.invalidate("tok-1")
        self.assertEqual(self.tokens.token(5), "tok-2")

    def test_a_refusal_is_an_oauth_error(self) -> None:
        refusing = TokenSource(
            "http://gw/oauth/token",
            quarry.OAuthCredentials("id", "secret"),
            lambda *args: (401, {}, b'{"error": "invalid_client", "error_description": "unknown client"}'),
        )
        with self.assertRaises(quarry.OAuthError) as caught:
            refusing.token(5)
        self.assertEqual((caught.exception.code, caught.exception.status), ("invalid_client", 401))


if __name__ == "__main__":
    unittest.main()
