"""Anomaly mode: forward tracebacks of failing backward nodes, NaN checks, zero cost off."""
import traceback
import warnings

import pytest

import plugrad as pg
from plugrad import autograd
from plugrad.core.autograd import anomaly

HERE = __file__


@pytest.fixture(autouse=True)
def _anomaly_off():
    assert not autograd.is_anomaly_enabled()
    yield
    autograd.set_detect_anomaly(False)


class Exploding(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise ValueError("backward exploded")


def _quiet_detect_anomaly(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return autograd.detect_anomaly(**kwargs)


def test_detect_anomaly_warns_when_entered():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = autograd.detect_anomaly()
    with mode:
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled()


def test_failing_backward_shows_forward_traceback(device):
    x = pg.ones(3, device=device, requires_grad=True)
    with _quiet_detect_anomaly():
        forward_line = traceback.extract_stack()[-1].lineno + 1
        y = Exploding.apply(x)
        with pytest.raises(ValueError, match="backward exploded") as info:
            y.sum().backward()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Error detected in ExplodingBackward" in notes
    assert "Traceback of forward call that caused the error" in notes
    assert f'File "{HERE}", line {forward_line}' in notes
    assert "y = Exploding.apply(x)" in notes
    # the trace ends at the user's line, not inside plugrad's core
    assert "plugrad/core" not in notes.strip().splitlines()[-2]


def test_set_detect_anomaly_function_form(device):
    autograd.set_detect_anomaly(True)
    assert autograd.is_anomaly_enabled()
    x = pg.ones(2, device=device, requires_grad=True)
    forward_line = traceback.extract_stack()[-1].lineno + 1
    y = Exploding.apply(x)
    with pytest.raises(ValueError) as info:
        y.sum().backward()
    assert f"line {forward_line}" in "\n".join(info.value.__notes__)
    autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()


def test_set_detect_anomaly_context_restores():
    with autograd.set_detect_anomaly(True):
        assert autograd.is_anomaly_enabled()
        with autograd.set_detect_anomaly(False):
            assert not autograd.is_anomaly_enabled()
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled()


def test_detect_anomaly_as_decorator(device):
    @_quiet_detect_anomaly()
    def run():
        assert autograd.is_anomaly_enabled()
        x = pg.ones(2, device=device, requires_grad=True)
        return Exploding.apply(x)

    y = run()
    assert not autograd.is_anomaly_enabled()
    assert "_anomaly" in vars(y.grad_fn)


def test_version_error_in_anomaly_mode_shows_forward_traceback(device):
    a = pg.ones(3, device=device, requires_grad=True)
    with _quiet_detect_anomaly():
        b = a * 2
        forward_line = traceback.extract_stack()[-1].lineno + 1
        c = b.sin()
        b.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            c.sum().backward()
    notes = "\n".join(info.value.__notes__)
    assert "Error detected in SinBackward0" in notes and f"line {forward_line}" in notes


@pytest.mark.parametrize("case, node, index", [
    ("zero_div_zero", "DivBackward0", 1),  # d(a/b)/db = -a/b**2 = -0/0
    ("sqrt_zero_times_zero", "SqrtBackward0", 0),  # inf * 0 from sqrt'(0) = inf
    ("log_zero_times_zero", "LogBackward0", 0),  # 1/0 * 0
])
def test_nan_in_backward_names_node_and_output(device, case, node, index):
    x = pg.zeros(3, device=device, requires_grad=True)
    z = pg.zeros((), device=device, requires_grad=True)
    with _quiet_detect_anomaly():
        if case == "zero_div_zero":
            y = x / z
        elif case == "sqrt_zero_times_zero":
            y = x.sqrt() * 0
        else:
            y = x.log().clamp(min=0) * 0
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    msg = str(info.value)
    assert f"Function '{node}' returned nan values in its {index}th output." in msg
    assert f'File "{HERE}"' in msg  # the forward traceback follows


def test_nan_check_can_be_turned_off(device):
    x = pg.zeros(3, device=device, requires_grad=True)
    with _quiet_detect_anomaly(check_nan=False):
        (x.sqrt() * 0).sum().backward()
    assert x.grad is not None


def test_nan_passes_silently_without_anomaly_mode(device):
    x = pg.zeros(3, device=device, requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    assert all(v != v for v in x.grad.tolist())  # NaN, as in PyTorch


def test_no_recording_when_off(device, monkeypatch):
    calls = []
    monkeypatch.setattr(anomaly, "record_forward", lambda node: calls.append(node))
    original = anomaly.call_rule
    monkeypatch.setattr(anomaly, "call_rule",
                        lambda node, *rest: calls.append(node) or original(node, *rest))
    x = pg.ones(3, device=device, requires_grad=True)
    y = (x * 2).exp().sum()
    assert "_anomaly" not in vars(y.grad_fn)
    y.backward()
    assert calls == []
    with _quiet_detect_anomaly():
        y = (x * 2).exp().sum()
        y.backward()
    assert len(calls) == 6  # 3 nodes recorded in forward, 3 run in backward


def test_recording_happens_when_on(device):
    x = pg.ones(3, device=device, requires_grad=True)
    with _quiet_detect_anomaly():
        y = x * 2
    assert isinstance(vars(y.grad_fn)["_anomaly"], list)
    z = x * 2
    assert "_anomaly" not in vars(z.grad_fn)
