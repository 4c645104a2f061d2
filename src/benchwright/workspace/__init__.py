"""The workspace: settings, configs, tasks, results and the derived ``.benchwright`` folder."""

from benchwright.workspace.workspace import Workspace, find_root

__all__ = ["Workspace", "find_root"]
