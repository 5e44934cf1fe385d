"""The rewrites of a trusted program (constant folding, the backend's ``compile_program``)
change what a replay costs, never what it computes: each test compares with the eager run
or with the plain replay, bit for bit."""
import re
import warnings

import pytest

import plugrad

DEVICES = ["cpu", "ref"]


def _tiny(device):
    x = plugrad.randn(16, device=device, requires_grad=True)
    y = plugrad.randn(16, device=device)

    def step():
        x.grad = None
        s = (x * y + x).sum()
        s.backward()
        return s
    return step, x


@pytest.mark.parametrize("device", DEVICES)
def test_the_backward_seed_is_folded_into_a_constant(device):
    plugrad.manual_seed(0)
    eager, xe = _tiny(device)
    plugrad.manual_seed(0)
    step, x = _tiny(device)
    fn = plugrad.compile(step)
    for _ in range(5):
        assert plugrad.equal(fn(), eager())
        assert plugrad.equal(x.grad, xe.grad)
    report = fn.explain()
    assert report.replays == 3
    assert report.constants_folded == 2  # full((), 1.0) and its broadcast
    assert "full" not in fn.replay_source()[0]


@pytest.mark.parametrize("device", DEVICES)
def test_a_constant_written_in_place_is_made_afresh_on_each_replay(device):
    """``zeros(3)`` is made of literals alone, but ``+=`` writes into it: folding it would
    carry each call's sum over into the next."""
    x = plugrad.tensor([1.0, 2.0, 3.0], device=device)

    def step():
        z = plugrad.zeros(3, device=device)
        z += x
        return z * 2

    fn = plugrad.compile(step)
    for _ in range(5):
        assert fn().tolist() == [2.0, 4.0, 6.0]
    assert fn.explain().replays == 3


@pytest.mark.parametrize("device", DEVICES)
def test_a_returned_constant_is_a_new_array_each_call(device):
    """An output made of literals is not folded: the caller may write into it."""
    def step():
        return plugrad.ones(3, device=device) * 2

    fn = plugrad.compile(step)
    for _ in range(5):
        out = fn()
        assert out.tolist() == [2.0, 2.0, 2.0]
        out.add_(1)
    assert fn.explain().replays == 3


def _celsius(device, compiled):
    c = plugrad.tensor([0.0, 100.0], device=device)
    f = plugrad.tensor([32.0, 212.0], device=device)
    w = plugrad.tensor(0.0, requires_grad=True, device=device)
    b = plugrad.tensor(0.0, requires_grad=True, device=device)

    def step():
        error = ((w * c + b - f) ** 2).mean()
        error.backward()
        with plugrad.no_grad():
            w.sub_(1e-4 * w.grad)
            b.sub_(1e-4 * b.grad)
            w.grad.zero_()
            b.grad.zero_()
        return error
    fn = plugrad.compile(step) if compiled else step
    return fn, w, b


def test_the_numpy_replay_calls_ufuncs_directly_with_the_same_bits():
    eager, we, be = _celsius("cpu", False)
    fn, w, b = _celsius("cpu", True)
    for _ in range(50):
        assert fn().item() == eager().item()
    assert (w.item(), b.item()) == (we.item(), be.item())
    plain, wp, bp = _celsius("cpu", True)
    plain.backend_compile = False
    for _ in range(50):
        plain()
    assert (wp.item(), bp.item()) == (w.item(), b.item())
    source, plain_source = fn.replay_source()[0], plain.replay_source()[0]
    assert "except (" in source and "except (" not in plain_source


@pytest.mark.parametrize("device", DEVICES)
def test_floating_point_warnings_made_errors_fall_back_to_the_quiet_kernels(device):
    """A replay under ``-W error``-like filters gives the eager results (inf, NaN), as the
    eager kernels do, also where the fast form raised."""
    def make():
        x = plugrad.tensor([1e30, -1e30, 0.0], device=device)
        acc = plugrad.zeros(3, device=device)

        def step():
            y = x + 1.0
            z = y * 1e30         # overflow (inf), written into y's buffer
            acc.add_(z)          # an update into state
            return (z - z) * 2   # inf - inf: NaN
        return step, acc

    eager, acc_e = make()
    step, acc = make()
    fn = plugrad.compile(step)
    for _ in range(3):
        fn(), eager()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, want = fn(), eager()
    assert fn.explain().replays == 2
    assert str(out.tolist()) == str(want.tolist()) == "[nan, nan, 0.0]"
    assert acc.tolist() == acc_e.tolist()
    assert acc.tolist()[:2] == [float("inf"), -float("inf")]
    assert "except (" in fn.replay_source()[0] or device == "ref"


def test_a_backend_without_the_hook_replays_the_program_as_captured():
    """The contract's default ``compile_program`` returns the steps unchanged (ref)."""
    fn, w, b = _celsius("ref", True)
    for _ in range(4):
        fn()
    assert "except (" not in fn.replay_source()[0]
    eager, we, be = _celsius("ref", False)
    for _ in range(4):
        eager()
    assert (w.item(), b.item()) == (we.item(), be.item())


@pytest.mark.parametrize("device", DEVICES)
def test_a_read_tensor_given_other_data_is_captured_again(device):
    """The prologue's checks, before any kernel: a tensor the step reads now holds data of
    another shape (or lost requires_grad): the call goes back to recording."""
    w = plugrad.ones(2, device=device, requires_grad=True)

    def step():
        w.grad = None
        loss = (w * 3).sum()
        loss.backward()
        return loss

    fn = plugrad.compile(step)
    for _ in range(4):
        assert fn().item() == 6.0
    with plugrad.no_grad():
        w.data = plugrad.ones(3, device=device)
    assert fn().item() == 9.0 and w.grad.tolist() == [3.0, 3.0, 3.0]
    assert any("changed shape ((3,), captured (2,))" in r for r in fn.explain().break_reasons)
    for _ in range(3):
        assert fn().item() == 9.0
    assert fn.explain().replays == 2 + 2  # recorded twice again, then replayed


@pytest.mark.parametrize("device", DEVICES)
def test_temporaries_deleted_after_their_last_use_change_nothing(device, monkeypatch):
    """Every temporary let go after its last use (the threshold lowered to 0 bytes): an
    MLP with SGD momentum trains as eagerly, bit for bit."""
    from plugrad import nn
    from plugrad.capture import program
    monkeypatch.setattr(program, "LARGE_BYTES", 0)

    def run(compiled):
        plugrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
        opt = plugrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = plugrad.randn(5, 6, device=device)
        y = plugrad.tensor([0, 2, 1, 1, 0], device=device)

        def step():
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        fn = plugrad.compile(step) if compiled else step
        losses = [fn().item() for _ in range(6)]
        return losses, [p.detach().cpu().tolist() for p in model.parameters()], fn

    eager, compiled = run(False), run(True)
    assert compiled[:2] == eager[:2]
    assert compiled[2].explain().replays == 3  # the first call makes the momentum buffers
    assert "    del s" in compiled[2].replay_source()[0]


@pytest.mark.parametrize("value", [0.5, -0.0, float("nan"), float("inf")])
def test_a_float_the_function_names_is_a_guard_by_value(value):
    """A Python float in the closure: the same value replays (0.0 and -0.0, and NaN, told
    apart as by its repr), another value captures again."""
    x = plugrad.tensor([1.0, 2.0])
    scale = 0.0 if value != value or value == 0.0 else 2.0

    def step():
        return x * scale

    fn = plugrad.compile(step)
    for _ in range(4):
        fn()
    assert fn.explain().replays == 2
    scale = value
    for _ in range(4):
        out = fn()
    assert str(out.tolist()) == str((x * value).tolist())
    assert fn.explain().replays == 4 and fn.explain().graphs == 2


def test_read_tensor_of_another_dtype_or_device_recaptures(device):
    """``p.data = p.data.double()`` (or ``model.double()``) keeps a read tensor's shape: the
    prologue checks its dtype and device too, or the replay would wrap float64 results as
    the float32 tensors it captured."""
    scale = plugrad.tensor([2.0, 3.0], device=device)
    x = plugrad.tensor([1.0, 1.0], device=device)
    fn = plugrad.compile(lambda v: (v * scale).sum())
    for _ in range(3):
        assert fn(x).dtype is plugrad.float32
    scale.data = plugrad.tensor([2.0, 3.0], dtype=plugrad.float64, device=device)
    out = fn(x)
    assert out.dtype is plugrad.float64 and str(out._data.dtype) == "float64"
    assert out.item() == 5.0
    assert any("changed dtype (plugrad.float64, captured plugrad.float32)" in r
               for r in fn.explain().break_reasons)
    other = "ref" if device != "ref" else "cpu"
    scale.data = plugrad.tensor([2.0, 3.0], dtype=plugrad.float64, device=device)
    for _ in range(2):
        fn(x)
    scale.data = plugrad.tensor([2.0, 3.0], dtype=plugrad.float64, device=other)
    with pytest.raises(RuntimeError, match="device"):
        fn(x)  # as eager: x and scale on two devices
    assert any("moved to another device" in r for r in fn.explain().break_reasons)


def _bits_of(t):
    a = t.detach().cpu().numpy()
    return a.dtype.str, a.shape, a.tobytes()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_numbers_beside_float_arrays_are_rounded_arrays_in_the_numpy_replay(dtype):
    """A Python number beside a float array is held as a 0-d array of the array's dtype
    (NumPy rounds the number to it anyway): the replay's bits are the eager ones, with a
    number float16 cannot hold (inf), warnings made errors included; sums of float32/64
    call ``np.add.reduce`` itself, float16 keeps the kernel's float32 accumulation."""
    dt = getattr(plugrad, dtype)
    x = plugrad.tensor([1.5, -2.25, 3e-3, 7.0, -0.0, 60000.0], dtype=dt)

    def step():
        y = x * 0.1 + 1e6        # 0.1 rounds to the dtype; 1e6 is inf in float16
        z = 3 - y / 7.0
        return z.sum() + (x * x).sum() * 1e-3

    fn = plugrad.compile(step)
    for _ in range(4):
        assert _bits_of(fn()) == _bits_of(step())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _bits_of(fn()) == _bits_of(step())
    assert fn.explain().replays == 3
    source = fn.replay_source()[0]
    assert "0.1" not in source and "1000000.0" not in source and "7.0" not in source
    reduce_calls = re.findall(r"= K\d+\(s\d+, None, C\d+, None, False\)", source)
    assert len(reduce_calls) == (0 if dtype == "float16" else 4)  # each with its fallback


def test_a_float64_sum_is_a_result_not_a_literal():
    """NumPy's float64 scalar (what a full float64 sum gives) is a Python float: the capture
    tracks it as the kernel's result, so the replay recomputes it (and writes no NumPy repr
    into the generated code)."""
    x = plugrad.tensor([1.5, -2.25], dtype=plugrad.float64)

    def step():
        return (3 - x / 7.0).sum() + (x * x).sum() * 1e-3

    fn = plugrad.compile(step)
    for i in range(6):
        assert fn().item() == step().item()
        if i == 3:
            with plugrad.no_grad():
                x.mul_(2.0)
    assert fn.explain().replays >= 3
    assert "np." not in fn.replay_source()[0]
