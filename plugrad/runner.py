"""``python -m plugrad run [--device D] SCRIPT [ARGS...]`` (or ``-m MODULE``).

Runs an unmodified PyTorch program on plugrad: installs the torch alias
(:mod:`plugrad.torch_alias`), picks the device (``--device``, else ``$PLUGRAD_DEVICE``,
else ``cpu``), hands the program its own ``sys.argv`` and runs it as ``__main__``, as
``python SCRIPT ARGS...`` would. Child processes inherit the alias and the device.
"""
from __future__ import annotations

import os
import runpy
import sys

USAGE = """usage: python -m plugrad run [--device DEVICE] SCRIPT [ARGS...]
       python -m plugrad run [--device DEVICE] -m MODULE [ARGS...]

Run a PyTorch program unchanged on plugrad: `import torch` and every `torch.X` resolve to
plugrad's modules (the real torch is never imported); ARGS go to the program.

options:
  --device DEVICE  cpu (NumPy, the default), ref (pure Python), cuda, or a plugin's device;
                   also $PLUGRAD_DEVICE. A device other than cpu and cuda also stands in
                   for the program's "cpu" (torch.device("cpu"), .cpu(), .to("cpu")).
  -m MODULE        run a module as a script, as `python -m MODULE`
  -h, --help       show this message"""


def _parse(argv: list[str]):
    device = module = None
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg in ("-h", "--help"):
            print(USAGE)
            raise SystemExit(0)
        if arg == "--device" or arg.startswith("--device="):
            if "=" in arg:
                device = arg.split("=", 1)[1]
            elif i + 1 < len(argv):
                i += 1
                device = argv[i]
            else:
                _fail("--device needs a value (cpu, ref, cuda, or a plugin's device)")
        elif arg == "-m" or (arg.startswith("-m") and len(arg) > 2):
            if len(arg) > 2:
                module = arg[2:]
            elif i + 1 < len(argv):
                i += 1
                module = argv[i]
            else:
                _fail("-m needs a module name")
            return device, module, None, argv[i + 1:]
        elif arg == "--":
            i += 1
            break
        else:
            _fail(f"unknown option {arg!r} (options of the program go after its name)")
        i += 1
    if i >= len(argv):
        _fail("expected a script to run")
    return device, None, argv[i], argv[i + 1:]


def _fail(message: str):
    print(f"{USAGE}\n\npython -m plugrad run: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def run(argv: list[str]) -> int:
    """Run the program ``argv`` describes; returns its exit status (exceptions propagate,
    so the interpreter prints the program's traceback as ``python SCRIPT`` would)."""
    device, module, script, args = _parse(argv)
    from plugrad.torch_alias import install_torch_alias
    try:
        install_torch_alias(device)
    except (ValueError, TypeError, RuntimeError) as exc:
        _fail(f"--device {device}: {exc}")
    if module is not None:
        sys.argv = [module, *args]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    if not os.path.exists(script):
        print(f"python -m plugrad run: can't open file {script!r}: no such file",
              file=sys.stderr)
        return 2
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0
