"""The contract's clauses (:mod:`plugrad.testing._contract`) on each backend and dtype.

Test ids are ``PRIMITIVES:CLAUSE-DEVICE-DTYPE``, so ``-k uniform`` selects every clause
about ``uniform``.
"""
import pytest

from plugrad.core.registry import get_registry
from plugrad.testing import _contract


def _cases(devices):
    reg = get_registry()
    out = []
    for device in devices:
        have = reg.table(device).dtypes
        for c in _contract.clauses():
            for dtype in c.dtypes:
                if dtype in have:
                    reason = c.xfail_reason(device, dtype)
                    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                    out.append(pytest.param((c, device, dtype), id=f"{c.id}-{device}-{dtype}",
                                            marks=marks))
    return out


def pytest_generate_tests(metafunc):
    if "clause_case" in metafunc.fixturenames:
        from plugrad.testing.plugin import selected_devices
        metafunc.parametrize("clause_case", _cases(selected_devices(metafunc.config)))


def test_contract_clause(clause_case):
    """The backend keeps this clause of the contract (quoted in the failure)."""
    c, device, dtype = clause_case
    k = get_registry().table(device)
    try:
        c.fn(k, dtype)
    except AssertionError as exc:
        raise AssertionError(f"{c.id} on {device} in {dtype}: {exc}\n  the contract: "
                             f"{c.text}") from None
