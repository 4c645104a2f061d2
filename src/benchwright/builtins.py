"""Registers benchwright's own plug-ins, through the same entry point third parties use."""

from __future__ import annotations

from benchwright.registry import Registry


def register(reg: Registry) -> None:
    from benchwright.criteria.unit_test import UnitTest
    from benchwright.criteria.usage import CpuUsage, RamUsage, TokenCount
    from benchwright.lang.java import JavaLanguage
    from benchwright.lang.python import PythonLanguage
    from benchwright.model.reference import ReferenceProvider
    from benchwright.sandbox.rlimit import RlimitSandbox

    for criterion in (UnitTest, CpuUsage, RamUsage, TokenCount):
        reg.add("criterion", criterion.name, criterion)
    reg.add("language", "python", PythonLanguage)
    reg.add("language", "java", JavaLanguage)
    reg.add("provider", "reference", ReferenceProvider)
    reg.add("sandbox", "rlimit", RlimitSandbox)
