"""The conformance suite refuses every deliberately broken backend of ``mutants.py``.

Each mutant is registered as a plugin would be and the real conformance suite runs on it
in-process (``pytest --pyargs plugrad.testing.conformance.test_kernels
plugrad.testing.conformance.test_contract --plugrad-backend mutNN -k OPS``): the kernel
cases and the contract's clauses for the primitives it breaks. A mutant that survives fails
its test (one the registry refuses at first use, before any case runs, counts as caught). The unbroken bases (NumPy, reference) run the same selections as controls and
must pass them all, so the failures come from the defects and not from the harness.
"""
import os
import sys

import pytest

from plugrad.backends.hooks import hookimpl
from plugrad.backends.numpy import NumPyBackend
from plugrad.backends.reference import ReferenceBackend
from plugrad.core.registry import BackendError, get_registry
from plugrad.testing import _contract

sys.path.insert(0, os.path.dirname(__file__))
from mutants import MUTANTS  # noqa: E402

SUITE = ["plugrad.testing.conformance.test_kernels", "plugrad.testing.conformance.test_contract"]


class _Plugin:
    def __init__(self, backend):
        self.backend = backend

    @hookimpl
    def plugrad_backends(self):
        return [self.backend]


class _Collector:
    def __init__(self):
        self.failed, self.passed, self.errors = [], 0, []
        self.refused = ""  # the registry's refusal at first use, if any

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            if report.failed:
                self.failed.append(report.nodeid.split("::")[-1])
            elif report.passed:
                self.passed += 1
        elif report.failed:
            self.errors.append(report.nodeid.split("::")[-1])


def _controls():
    out = []
    for code, cls in (("np", NumPyBackend), ("ref", ReferenceBackend)):
        b = cls()
        b.name, b.device_type = f"control-{code}", f"ctl{code}"
        out.append((b, sorted({op for m in MUTANTS if m.base is cls for op in m.ops})))
    return out


def _run(device, ops, rootdir, first_failure=True) -> _Collector:
    collector = _Collector()
    try:  # what --plugrad-backend does first: a backend refused here is a usage error
        get_registry().table(device)
    except BackendError as exc:
        collector.refused = str(exc)
        return collector
    pytest.main(["--pyargs", *SUITE, "--plugrad-backend", device, "-k", " or ".join(ops),
                 *(["--maxfail=1"] if first_failure else []),  # one failure is a catch
                 "-q", "--tb=no", "--no-header", "-p", "no:cacheprovider", "-o", "addopts=",
                 "--rootdir", str(rootdir), "-W", "ignore::pytest.PytestAssertRewriteWarning"],
                plugins=[collector])
    return collector


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every mutant and both controls through the suite: ``{device: collector}``."""
    reg = get_registry()
    runs = [(m.backend(), m.ops, True) for m in MUTANTS] + [
        (b, ops, False) for b, ops in _controls()]
    plugins = [(_Plugin(b), b.device_type, ops, first) for b, ops, first in runs]
    for plugin, device, _, _ in plugins:
        reg.register_plugin(plugin, name=f"plugrad-test-{device}")
    root = tmp_path_factory.mktemp("mutants")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        yield {device: _run(device, ops, root, first) for _, device, ops, first in plugins}
    finally:
        os.chdir(cwd)
        for plugin, *_ in plugins:
            reg.unregister_plugin(plugin)


def test_enough_mutants():
    assert len(MUTANTS) >= 30
    assert len({m.code for m in MUTANTS}) == len(MUTANTS), "mutant codes must be unique"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.code for m in MUTANTS])
def test_mutant_is_caught(outcomes, mutant):
    run = outcomes[mutant.device]
    if run.refused:  # refused when first used, before any case runs
        assert mutant.device in run.refused or "declares dtype" in run.refused, run.refused
        return
    assert not run.errors, f"{mutant.code}: errors outside the test bodies: {run.errors[:5]}"
    assert run.failed, f"mutant {mutant.code!r} ({mutant.clause}) passed all {run.passed} " \
                       f"conformance cases selected by -k {' or '.join(mutant.ops)}"


@pytest.mark.parametrize("device", ["ctlnp", "ctlref"])
def test_unbroken_bases_pass_the_same_cases(outcomes, device):
    run = outcomes[device]
    assert run.passed > 100 and not run.failed and not run.errors, \
        f"{device}: {run.failed[:10]} {run.errors[:5]}"


def test_every_clause_has_a_mutant():
    """A contract clause comes with a mutant that breaks it (``Mutant.clause_ids``)."""
    claimed = {c for m in MUTANTS for c in m.clause_ids}
    missing = sorted(c.id for c in _contract.clauses() if c.id not in claimed)
    assert not missing, f"contract clauses no mutant breaks: {missing}"
