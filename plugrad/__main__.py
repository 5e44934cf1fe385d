"""``python -m plugrad info [--verbose]``: what this installation can run, and why not.

Lists the versions that matter, every registered backend (device type, availability, where
it came from) and every plugin that failed to load, so a bug report can paste one output.
"""
from __future__ import annotations

import argparse
import platform
import sys
import warnings


def _versions() -> list[str]:
    import numpy
    import pluggy

    import plugrad
    return [f"plugrad {plugrad.__version__}",
            f"Python {platform.python_version()} ({platform.python_implementation()})",
            f"NumPy {numpy.__version__}",
            f"pluggy {pluggy.__version__}",
            f"default device: {plugrad.get_default_device()}"]


def _backend_lines(reg, verbose: bool) -> list[str]:
    lines = ["backends:"]
    for device_type, backend in sorted(reg.backends.items()):
        ok = backend.is_available()
        state = "available" if ok else f"unavailable ({backend.unavailable_reason()})"
        lines.append(f"  {device_type:<6} {backend.name:<12} {state}; "
                     f"source: {reg.origins.get(device_type, 'unknown')}")
        if verbose:
            lines.extend(_kernel_lines(backend.name, reg.kernel_sources(device_type)))
    return lines


def _kernel_lines(backend_name: str, sources: dict) -> list[str]:
    """Kernels grouped as native (the backend's own), composite, or contributed by a plugin."""
    native = sorted(op for op, src in sources.items() if src == backend_name)
    composite = sorted(op for op, src in sources.items() if src == "composite")
    contributed = sorted(f"{op} (from {src})" for op, src in sources.items()
                         if src not in (backend_name, "composite"))
    return [f"      {label} ({len(ops)}): {', '.join(ops) or '-'}"
            for label, ops in (("native", native), ("composite", composite),
                               ("contributed", contributed))]


def _failure_lines(reg) -> list[str]:
    if not reg.failures:
        return ["failed plugins: none"]
    return ["failed plugins:"] + [f"  {name} (from {dist}): {message}"
                                  for name, dist, message in reg.failures]


def info(verbose: bool = False) -> str:
    """The report ``python -m plugrad info`` prints."""
    from plugrad.core.registry import get_registry
    reg = get_registry()
    with warnings.catch_warnings():  # failures are listed below, not warned about
        warnings.simplefilter("ignore", RuntimeWarning)
        reg.load_entry_points()
    return "\n".join(_versions() + _backend_lines(reg, verbose) + _failure_lines(reg))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plugrad",
                                     description="plugrad command-line tools")
    commands = parser.add_subparsers(dest="command")
    info_cmd = commands.add_parser("info", help="versions, backends and plugin failures")
    info_cmd.add_argument("--verbose", "-v", action="store_true",
                          help="also list each backend's native, composite and contributed "
                               "kernels")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    print(info(verbose=args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
