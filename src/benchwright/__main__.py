"""``python -m benchwright``."""

from benchwright.cli.app import main

main()
