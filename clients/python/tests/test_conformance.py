"""The shared conformance cases, one test each (run by test/clients-conformance.test.ts)."""
from __future__ import annotations

import unittest

from tests.conformance import CaseRunner, fixture, load_cases

FIXTURE = fixture()


class ConformanceTest(unittest.TestCase):
    """One test method per case file; skipped when no harness gave QUARRY_CONFORMANCE."""


def _make(case):
    @unittest.skipIf(FIXTURE is None, "QUARRY_CONFORMANCE is not set: run test/clients-conformance.test.ts")
    def test(self):
        problems = CaseRunner(FIXTURE, case).run()
        self.assertEqual(problems, [], f"{case['name']}: {case['description']}")
        print(f"\nCONFORMANCE PASS {case['name']}", flush=True)

    return test


for _case in load_cases():
    setattr(ConformanceTest, f"test_{_case['name'].replace('-', '_')}", _make(_case))

if __name__ == "__main__":
    unittest.main()
