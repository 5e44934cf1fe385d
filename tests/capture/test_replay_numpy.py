"""The NumPy backend's rewrites of a trusted program that share work between kernel calls
(``plugrad/backends/numpy/_replay.py``): the replay computes fewer passes, never other
bits than the eager kernels."""
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import plugrad
from plugrad import nn
from plugrad.backends.numpy import NumPyBackend
from plugrad.backends.numpy import _replay


def _bits(a):
    a = np.asarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def _classifier_run(compiled, ignore=False, spatial=False, steps=6, backend_compile=True):
    plugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 12))
    opt = plugrad.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    x = plugrad.randn(5, 6)
    y = plugrad.tensor([[0, 2], [1, -100], [2, 2], [0, 1], [-100, 0]] if spatial
                       else [0, 2, 11, 5, -100 if ignore else 3])

    def step():
        opt.zero_grad()
        z = model(x)
        if spatial:  # (N, C, L) logits: class dim 1
            z = z.reshape(5, 6, 2)
        loss = nn.functional.cross_entropy(z, y, ignore_index=-100)
        loss.backward()
        opt.step()
        return loss
    fn = plugrad.compile(step) if compiled else step
    if compiled:
        fn.backend_compile = backend_compile
    losses = [fn().item() for _ in range(steps)]
    return losses, [_bits(p.detach().numpy()) for p in model.parameters()], fn


def _shares(fn) -> bool:
    env = [e.replay.__globals__ for e in fn._entries.values() if e.replay is not None]
    return any(isinstance(getattr(v, "__self__", None), _replay._SharedSoftmax)
               for g in env for v in g.values())


@pytest.mark.parametrize("ignore,spatial", [(False, False), (True, False), (False, True)])
def test_a_cross_entropy_step_shares_its_softmax_and_trains_as_eagerly(ignore, spatial):
    eager = _classifier_run(False, ignore, spatial)
    compiled = _classifier_run(True, ignore, spatial)
    assert compiled[:2] == eager[:2]
    assert compiled[2].explain().replays == 3  # the first call makes the momentum buffers
    assert _shares(compiled[2])
    plain = _classifier_run(True, ignore, spatial, backend_compile=False)
    assert plain[:2] == eager[:2] and not _shares(plain[2])


def _edge_logits():
    big = np.finfo(np.float32).max
    return np.array([[1.0, 2.0, 3.0, -1.0],
                     [np.inf, 0.0, 1.0, 2.0],        # softmax NaN (as PyTorch)
                     [-np.inf, -np.inf, -np.inf, -np.inf],
                     [np.nan, 0.0, 1.0, 2.0],
                     [big, big, -big, 0.0],
                     [-0.0, 0.0, -0.0, -200.0]], dtype=np.float32)


@pytest.mark.parametrize("errors", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_the_shared_softmax_gives_the_kernels_bits_on_edge_rows(dtype, errors):
    k = NumPyBackend()
    with np.errstate(over="ignore"):  # float32's maximum is inf in float16
        x = _edge_logits().astype(dtype)
    target = np.array([2, 0, 1, 3, 0, 1])
    g = np.array(1.0, dtype=dtype)
    valid = np.array([True, True, False, True, True, True])
    with warnings.catch_warnings():
        if errors:
            warnings.simplefilter("error")
        for v in (None, valid):
            share = _replay._SharedSoftmax(k)
            assert _bits(share.log_softmax(x, 1)) == _bits(k.log_softmax(x, 1))
            got = share.cross_entropy_backward(g, x, target, v, 1 / 6)
            assert _bits(got) == _bits(k.cross_entropy_backward(g, x, target, v, 1 / 6))


def test_the_shared_softmax_computes_afresh_for_other_logits():
    """A backward given other logits than the forward kept (a concurrent replay) does not use
    what was kept; nor does a second backward."""
    k = NumPyBackend()
    x = _edge_logits()[:1]
    other = x * 2
    target, g = np.array([1]), np.array(1.0, dtype=np.float32)
    share = _replay._SharedSoftmax(k)
    share.log_softmax(x, 1)
    want = _bits(k.cross_entropy_backward(g, other, target, None, 1.0))
    assert _bits(share.cross_entropy_backward(g, other, target, None, 1.0)) == want
    share.log_softmax(x, 1)
    share.cross_entropy_backward(g, x, target, None, 1.0)
    assert share.kept is None
    want = _bits(k.cross_entropy_backward(g, x, target, None, 1.0))
    assert _bits(share.cross_entropy_backward(g, x, target, None, 1.0)) == want


def _step(name, fn, *args, **kwargs):
    return SimpleNamespace(name=name, fn=fn, args=args, kwargs=kwargs, outs=None, fallback=())


@pytest.mark.parametrize("between,paired", [("sum", True), ("add_into", False),
                                            ("update_", False), ("assign", False)])
def test_logits_possibly_written_between_are_not_shared(between, paired):
    k = NumPyBackend()
    x, g, t = (SimpleNamespace(slot=i) for i in range(3))
    fwd = _step("log_softmax", k.log_softmax, x, 1)
    mid = _step(between, k.sum, x, None, False)
    bwd = _step("cross_entropy_backward", k.cross_entropy_backward, g, x, t, None, 1.0)
    _replay._share_softmax(NumPyBackend, [fwd, mid, bwd])
    assert isinstance(getattr(fwd.fn, "__self__", None), _replay._SharedSoftmax) is paired
    assert isinstance(getattr(bwd.fn, "__self__", None), _replay._SharedSoftmax) is paired
    other = _step("log_softmax", k.log_softmax, x, 0)  # another axis than the backward's
    bwd = _step("cross_entropy_backward", k.cross_entropy_backward, g, x, t, None, 1.0)
    _replay._share_softmax(NumPyBackend, [other, bwd])
    assert bwd.fn == k.cross_entropy_backward


def _edge_values(dtype, shape=(40, 33)):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    a.flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -np.nan]
    return a.astype(dtype), rng.random(shape) < 0.5


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("pos", [1, 2])
@pytest.mark.parametrize("other", [0.0, 0, -0.0, 2.5, "array"])
def test_where_written_into_an_operand_has_the_kernels_bits(dtype, pos, other):
    """``where(cond, a, b)`` into ``a`` or ``b``: the eager kernel's bits, by the bits path
    (the other operand +0) or otherwise, for every float dtype."""
    import ml_dtypes  # noqa: F401 - bfloat16
    k = NumPyBackend()
    dst, cond = _edge_values(np.dtype(dtype))
    if isinstance(other, str):
        other = _edge_values(np.dtype(dtype))[0][::-1].copy()
    args = (cond, dst, other) if pos == 1 else (cond, other, dst)
    want = _bits(k.where(*args))
    form = k.inplace_kernels()["where"][pos]
    out = form(*args)
    assert out is dst and _bits(out) == want


def test_relu_backward_writes_into_the_incoming_gradient():
    """The captured MLP step's ReLU backward (``where(y <= 0, 0, g)``) takes ``g``'s buffer,
    and the step still trains as eagerly, bit for bit."""
    eager = _classifier_run(False)
    compiled = _classifier_run(True)
    assert compiled[:2] == eager[:2]
    # the ReLU and its backward (linear adds its bias into its product's array itself)
    assert compiled[2].explain().buffers_reused == 2
    # the backward seed full((), 1.0): the cross-entropy's gradient is a new array (not a
    # view of it), so nothing the step leaves behind can alias the constant
    assert compiled[2].explain().constants_folded == 1


def test_permute_and_reshape_call_the_array_methods_and_fall_back_for_scalars():
    """``permute``/``reshape`` replay as ``ndarray.transpose``/``ndarray.reshape``; a full
    reduction's result is a NumPy scalar (no ndarray): the kernel serves it instead."""
    x = plugrad.randn(3, 4)

    def step():
        s = x.sum()                       # a NumPy scalar underneath
        return s.reshape(1, 1) + x.t().reshape(1, 12).sum(1, keepdim=True)

    fn = plugrad.compile(step)
    for _ in range(4):
        out = fn()
    assert fn.explain().replays == 2
    assert _bits(out.numpy()) == _bits(step().numpy())
    source_env = next(iter(fn._entries.values())).replay.__globals__.values()
    assert np.ndarray.transpose in list(source_env) and np.ndarray.reshape in list(source_env)
