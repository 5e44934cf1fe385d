"""``python -m plugrad info [--verbose]``, ``python -m plugrad demo [options]`` and
``python -m plugrad run [--device D] SCRIPT [ARGS...]`` (:mod:`plugrad.runner`).

``info`` lists the versions that matter, every registered backend (device type,
availability, where it came from) and every plugin that failed to load, so a bug report can
paste one output.

``demo`` trains the small CNN of ``examples/train_digits.py`` on the 8x8 digits shipped in
``examples/data/digits.npz`` (on plugrad's default device unless ``--device`` says
otherwise) and prints the final test accuracy; every option of that example can be
passed (``python -m plugrad demo --help``). The examples live in the repository, next to
the package, so the demo needs a checkout (``pip install -e .``); it needs neither tqdm nor
matplotlib (with tqdm installed it shows a progress bar).
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import warnings
from pathlib import Path


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
    """One line per backend, in columns as wide as the longest names; a backend whose
    availability check raises is listed as unavailable with the error."""
    from plugrad.core.registry import probe_available
    lines = ["backends:"]
    items = sorted(reg.backends.items())
    dev_w = max([6] + [len(d) for d, _ in items])
    name_w = max([12] + [len(str(b.name)) for _, b in items])
    for device_type, backend in items:
        ok, reason, _ = probe_available(backend)
        state = "available" if ok else f"unavailable ({reason})"
        lines.append(f"  {device_type:<{dev_w}} {backend.name:<{name_w}} {state}; "
                     f"source: {reg.origins.get(device_type, 'unknown')}")
        if verbose:
            try:
                lines.extend(_kernel_lines(backend.name, reg.kernel_sources(device_type)))
            except Exception as exc:  # noqa: BLE001 - a plugin must not break the report
                lines.append(f"      kernels: cannot be listed: {type(exc).__name__}: {exc}")
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


EXAMPLES_ENV = "PLUGRAD_EXAMPLES_DIR"

# Run in a fresh interpreter: the demo's BLAS products are tiny, and OpenBLAS's worker
# threads (fixed once NumPy is loaded, as it is here) slow them down many times over on a
# busy machine, so the child starts with one BLAS thread unless the user chose otherwise.
_DEMO_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
sys.argv[0] = "python -m plugrad demo"
import train_digits
try:
    metrics = train_digits.main(sys.argv[2:])
except FileNotFoundError as exc:
    sys.exit(f"python -m plugrad demo: {exc}")
print(f"plugrad demo: final test accuracy {100 * metrics['test_accuracy']:.2f}% "
      f"on {metrics['test_size']} held-out digits ({metrics['device']}, "
      f"{metrics['epochs']} epochs, {metrics['seconds']:.1f} s)")
"""


def examples_dir() -> Path:
    """The repository's ``examples/`` folder: ``$PLUGRAD_EXAMPLES_DIR``, or the one next to
    the package in a checkout (an editable install)."""
    override = os.environ.get(EXAMPLES_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parent.parent / "examples"


def demo(argv: list[str]) -> int:
    """``python -m plugrad demo [train_digits options]``: train the digits CNN, print the
    final test accuracy; returns the exit status."""
    where = examples_dir()
    script = where / "train_digits.py"
    data = where / "data" / "digits.npz"
    user_data = any(a == "--data" or a.startswith("--data=") for a in argv)
    wants_help = any(a in ("-h", "--help") for a in argv)
    missing = [p for p in (script, None if user_data or wants_help else data)
               if p is not None and not p.is_file()]
    if missing:
        print(f"python -m plugrad demo: cannot find {', '.join(str(p) for p in missing)}.\n"
              f"The demo runs examples/train_digits.py on examples/data/digits.npz, which "
              f"ship with the plugrad repository, not with the installed package: clone the "
              f"repository and `pip install -e .` there, or set {EXAMPLES_ENV} to a copy of "
              f"its examples/ folder.", file=sys.stderr)
        return 1
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    cmd = [sys.executable, "-c", _DEMO_CHILD, str(where), *argv]
    try:
        return subprocess.run(cmd, env=env).returncode
    except KeyboardInterrupt:
        return 130


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["demo"]:  # everything after ``demo`` belongs to the example
        return demo(argv[1:])
    if argv[:1] == ["run"]:  # everything after ``run`` belongs to the runner and the program
        from plugrad.runner import run
        return run(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m plugrad",
                                     description="plugrad command-line tools")
    commands = parser.add_subparsers(dest="command")
    info_cmd = commands.add_parser("info", help="versions, backends and plugin failures")
    info_cmd.add_argument("--verbose", "-v", action="store_true",
                          help="also list each backend's native, composite and contributed "
                               "kernels")
    commands.add_parser("run", help="run a PyTorch script unchanged on plugrad "
                                    "(options: run --help)")
    commands.add_parser("demo", help="train a small CNN on the bundled 8x8 digits and print "
                                     "its test accuracy (options: demo --help)")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    print(info(verbose=args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
