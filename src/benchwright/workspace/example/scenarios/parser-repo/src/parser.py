"""A tiny command parser: the example repository the example agents work on."""


def parse(line: str) -> list[str]:
    """Split a command line into words; the command itself is lower-cased.

    >>> parse("GET  /index.html")
    ['get', '/index.html']
    """
    words = line.split()
    command = words[0]
    return [command.lower(), *words[1:]]
