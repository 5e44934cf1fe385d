"""Parametrisation of the conformance tests from the op database (shared by the modules)."""
from __future__ import annotations

import pytest

from plugrad.testing import _opdb_linalg, opdb


def _devices(config):
    from plugrad.testing.plugin import selected_devices
    return selected_devices(config)


def _dtypes(device):
    from plugrad.core.registry import get_registry
    return get_registry().table(device).dtypes


def _case(op, device, dtype, test):
    reason = op.xfail_reason(test, device, dtype)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    missing = _opdb_linalg.missing_kernels(op, device)
    if missing:  # optional kernels without a composite: a resource the backend lacks
        marks = [pytest.mark.skip(reason=f"the {device!r} backend has no {', '.join(missing)} "
                                         f"kernel (optional, no composite fallback)")]
    return pytest.param((op, device, dtype), id=f"{op.name}-{device}-{dtype}", marks=marks)


def _cases(test, fixture, devices):
    public, kernels = opdb.ops("public"), opdb.ops("kernel")
    out = []
    for device in devices:
        have = _dtypes(device)
        under_test = [d for d in opdb.DTYPES_UNDER_TEST if d in have]
        if fixture == "public_case":
            out += [_case(o, device, d, test) for o in public for d in o.dtypes if d in have]
        elif fixture == "grad_case":
            out += [_case(o, device, "float64", test) for o in public
                    if o.differentiable and "float64" in o.dtypes and "float64" in have]
        elif fixture == "noncontig_grad_case":
            out += [_case(o, device, "float64", test) for o in public
                    if o.differentiable and "float64" in o.dtypes and "float64" in have
                    and any(s.grad and s.noncontig for s in o.samples(device, "float64"))]
        elif fixture == "backward_case":
            out += [_case(o, device, d, test) for o in public if o.differentiable
                    for d in ("float32", "float64") if d in o.dtypes and d in have]
        elif fixture == "variant_case":
            out += [_case(o, device, d, test) for o in public for d in o.dtypes
                    if d in have and (o.method or o.aliases or o.inplace or o.method_aliases)]
        elif fixture == "unsupported_case":
            out += [_case(o, device, d, test) for o in public for d in under_test
                    if d not in o.dtypes]
        elif fixture == "promotion_case":
            out += [_case(o, device, d, test) for o in public if o.promotion
                    for d in o.dtypes if d in have]
        elif fixture == "kernel_case":
            out += [_case(o, device, d, test) for o in kernels for d in o.dtypes if d in have]
    return out


def pytest_generate_tests(metafunc):
    devices = None
    for fixture in ("public_case", "grad_case", "noncontig_grad_case", "backward_case",
                    "variant_case", "unsupported_case", "promotion_case", "kernel_case"):
        if fixture in metafunc.fixturenames:
            devices = devices or _devices(metafunc.config)
            metafunc.parametrize(fixture, _cases(metafunc.function.__name__, fixture, devices))
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", _devices(metafunc.config))
