"""benchwright serve: the REST API and the web UI, on one service layer shared with the CLI."""
