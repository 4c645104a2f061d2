"""Graded tests the agent never sees (hidden while it works, put back before the scorers)."""

import unittest

from src.parser import parse


class HiddenTest(unittest.TestCase):
    def test_blank(self) -> None:
        self.assertEqual(parse("   "), [])

    def test_tab(self) -> None:
        self.assertEqual(parse("\tPUT\tx"), ["put", "x"])


if __name__ == "__main__":
    unittest.main()
