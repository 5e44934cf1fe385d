"""The pytest plugin (entry point ``pytest11: plugrad``) behind the conformance suite.

It adds ``--plugrad-backend NAME`` (a device type such as ``cpu`` or a backend name such as
``numpy``; repeatable; default: every registered backend that can run here) and, after a
run of the suite, a pass/fail line per op and backend.

It is loaded by every pytest run in an environment where plugrad is installed, so it
imports plugrad only when the conformance suite asks for it.
"""
from __future__ import annotations

import collections

import pytest

_KEY = "plugrad_op"


def pytest_addoption(parser):
    group = parser.getgroup("plugrad", "plugrad conformance suite")
    group.addoption("--plugrad-backend", action="append", default=[], metavar="NAME",
                    dest="plugrad_backend",
                    help="run the plugrad conformance suite on this backend (device type or "
                         "backend name); repeatable. Default: every available backend.")


def selected_devices(config) -> list[str]:
    """Device types under test, from ``--plugrad-backend`` (validated) or all available."""
    cached = getattr(config, "_plugrad_devices", None)
    if cached is not None:
        return cached
    from plugrad.core.registry import BackendError, get_registry, probe_available
    reg = get_registry()
    reg.load_entry_points()
    names = config.getoption("plugrad_backend", default=None) or []
    if not names:
        out = [t.device_type for t in reg.available_tables()]
    else:
        out = []
        for name in names:
            dev = name if name in reg.backends else next(
                (d for d, b in reg.backends.items() if b.name == name), None)
            if dev is None:
                known = ", ".join(f"{d} ({b.name})" for d, b in sorted(reg.backends.items()))
                raise pytest.UsageError(f"--plugrad-backend {name!r}: no registered backend "
                                        f"has that device type or name; registered: {known}"
                                        f"{reg.failure_note()}")
            backend = reg.backends[dev]
            ok, reason, _ = probe_available(backend)
            if not ok:
                raise pytest.UsageError(f"--plugrad-backend {name!r}: backend {backend.name!r} "
                                        f"is not available here: {reason}")
            try:
                reg.table(dev)
            except BackendError as exc:
                raise pytest.UsageError(f"--plugrad-backend {name!r}: {exc}") from None
            if dev not in out:
                out.append(dev)
    config._plugrad_devices = out
    return out


def pytest_collection_modifyitems(config, items):
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        for value in params.values():
            if isinstance(value, tuple) and len(value) == 3 and hasattr(value[0], "sample_inputs"):
                op, device, _ = value
                item.user_properties.append((_KEY, (f"{op.name}" + (
                    " (kernel)" if op.kind == "kernel" else ""), device)))
            elif isinstance(value, tuple) and len(value) == 3 and hasattr(value[0], "primitives"):
                rule, device, _ = value  # a contract clause (plugrad.testing._contract)
                item.user_properties.append((_KEY, (f"clause: {rule.name}", device)))


class _Reporter:
    """Counts conformance outcomes per (op, backend) and prints them after the run."""

    def __init__(self):
        self.counts = collections.defaultdict(collections.Counter)

    def pytest_runtest_logreport(self, report):
        key = dict(report.user_properties).get(_KEY)
        if key is None:
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            else:
                outcome = report.outcome
            self.counts[tuple(key)][outcome] += 1

    def pytest_terminal_summary(self, terminalreporter):
        if not self.counts:
            return
        tr = terminalreporter
        tr.section("plugrad conformance: per op and backend")
        width = max(len(op) for op, _ in self.counts) + 2
        for (op, device), c in sorted(self.counts.items()):
            status = "FAIL" if c["failed"] or c["xpassed"] else "PASS"
            detail = ", ".join(f"{n} {k}" for k, n in sorted(c.items()) if n)
            tr.write_line(f"{op:<{width}}{device:<8}{status}  ({detail})")
        failed = sorted(f"{op}[{device}]" for (op, device), c in self.counts.items()
                        if c["failed"] or c["xpassed"])
        tr.write_line(f"ops failing: {len(failed)}" + (f": {', '.join(failed)}" if failed else ""))


#: The NumPy backend's warnings filter (``plugrad.backends.numpy.FP_WARNINGS``), restated so
#: that loading this plugin does not import plugrad. pytest runs each test under its own
#: filters, where the one the backend installs at import may be missing.
FP_WARNINGS_FILTER = ("ignore:(overflow|underflow|invalid value|divide by zero) encountered in"
                      ":RuntimeWarning:plugrad(\\.|$)")


def pytest_configure(config):
    config.pluginmanager.register(_Reporter(), "plugrad-conformance-reporter")
    config.addinivalue_line("filterwarnings", FP_WARNINGS_FILTER)
