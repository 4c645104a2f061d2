"""The Markdown report quotes what tasks, models and agents wrote as text."""

from benchwright.results.report import report_markdown


def test_an_agents_stderr_never_becomes_html_a_link_or_an_image() -> None:
    said = ("stderr ends: <img src=x onerror=alert(1)> [c](javascript:alert(1)) "
            "![](https://attacker.example/p.png) a|b `code` \x1b[31m")
    text = report_markdown({"run_id": "r", "agents": [
        {"scenario": "s", "task": "t", "agent": "a", "run-badge": "FAIL", "badge_reason": said}]})
    row = next(line for line in text.splitlines() if line.startswith("| s |"))
    assert "<img" not in row and "&lt;img src=x onerror=alert(1)&gt;" in row
    assert "](javascript" not in row and "![](" not in row
    assert "a\\|b" in row and "\x1b" not in row and "\\`code\\`" in row
    assert row.count(" | ") == 8  # still nine cells
