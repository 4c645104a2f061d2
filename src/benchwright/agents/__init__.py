"""Coding agents: scenarios (a workspace, scorers, tasks), agent runs, scorers and gates."""
