"""The differential suite's hypothesis profile (no example database, no deadline: CI runs
are reproducible and tiny ops on the pure-Python backend are slow) and its summary line."""
from __future__ import annotations

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the test module skips, saying so
    settings = None
else:
    settings.register_profile("plugrad-differential", database=None, deadline=None,
                              suppress_health_check=list(HealthCheck), print_blob=False)

from .stats import STATS


def pytest_terminal_summary(terminalreporter):
    lines = STATS.lines()
    if lines:
        terminalreporter.section("differential testing against torch")
        for line in lines:
            terminalreporter.write_line(line)
