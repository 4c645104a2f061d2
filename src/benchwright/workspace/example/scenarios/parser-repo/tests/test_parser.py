import unittest

from src.parser import parse


class ParseTest(unittest.TestCase):
    def test_words(self) -> None:
        self.assertEqual(parse("GET  /index.html"), ["get", "/index.html"])

    def test_one_word(self) -> None:
        self.assertEqual(parse("QUIT"), ["quit"])

    def test_empty(self) -> None:
        self.assertEqual(parse(""), [])


if __name__ == "__main__":
    unittest.main()
