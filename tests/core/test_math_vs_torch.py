"""The math ops against PyTorch: values (special values and signs of zeros included), result
dtypes and float64 gradients, on every built-in backend; bit operations on every integer
dtype; ``finfo``/``iinfo``; bool operands of the arithmetic ops (report entries 23, 26)."""
import math

import numpy as np
import pytest

import plugrad
import plugrad.special

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -1.5, 1e300, -1e300,
            2.0 ** -1022, -(2.0 ** -1022), 5e-324, -5e-324, 1000.0, 1e-9, -1e-9, 30.0, -30.0]
RNG = np.random.default_rng(7)

#: name -> (low, high) of smooth points for values and gradients
UNARY = {"asin": (-0.95, 0.95), "acos": (-0.95, 0.95), "atan": (-5, 5), "sinh": (-5, 5),
         "cosh": (-5, 5), "asinh": (-5, 5), "acosh": (1.05, 5), "atanh": (-0.95, 0.95),
         "erfc": (-4, 6), "erfinv": (-0.999, 0.999), "lgamma": (-4.9, 6),
         "digamma": (-4.9, 6), "sinc": (-3, 3), "deg2rad": (-400, 400), "rad2deg": (-7, 7),
         "frac": (-5, 5), "logit": (0.02, 0.98)}
#: extra points a function needs: its poles, zeros and domain edges
EDGES = {"asin": [1.0, -1.0, 1.0000001], "acos": [1.0, -1.0], "acosh": [1.0, 0.999],
         "atanh": [1.0, -1.0, 1.5], "erfinv": [1.0, -1.0, 1 - 1e-12, -(1 - 2 ** -30)],
         "lgamma": [-1.0, -2.0, -100.0, 2.0, 3.0, 1 - 2 ** -30, 2 + 2 ** -30, 171.5, 1e20],
         "digamma": [-1.0, -2.0, -2.5, 1.4616321449683622, 1e-300, 1e20],
         "erfc": [10.0, 26.0, -10.0, 27.5], "sinc": [1.0, -2.0, 1e-30],
         "logit": [0.0, 1.0, -0.5, 2.0]}
#: points where PyTorch itself is off (documented): excluded from the value comparison
TORCH_OFF = {
    # torch's float64 lgamma(1) is 6.4e-17 (not 0); ours is exact, compared with atol
    "lgamma": dict(atol=1e-15),
    # at digamma's zero (1.4616...) both are rounding noise of size 4e-16
    "digamma": dict(atol=1e-15),
}


def _t(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype)


def _p(values, device, dtype=plugrad.float64, requires_grad=False):
    return plugrad.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def _host(t):
    return np.asarray(t.detach().cpu().tolist() if hasattr(t, "cpu") else t.tolist(),
                      dtype=np.float64)


def _same(got, want, rtol=1e-12, atol=0.0, where=""):
    """Values close, NaN where NaN, and the sign of every zero equal."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    zeros = (got == 0) & (want == 0)
    assert (np.signbit(got[zeros]) == np.signbit(want[zeros])).all(), \
        f"{where}: sign of zero differs at {np.flatnonzero(zeros & (np.signbit(got) != np.signbit(want)))}"


def _call(mod, name, x):
    return getattr(mod, name)(x)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_float64(name, device):
    lo, hi = UNARY[name]
    n = 6 if device == "ref" else 200
    xs = SPECIALS + EDGES.get(name, []) + RNG.uniform(lo, hi, n).tolist()
    if name in ("sinh", "cosh"):  # torch overflows from 709.78 on, C's sinh from 710.48
        xs = [x for x in xs if not 709.7 < abs(x) < 710.5]
    got = _call(plugrad, name, _p(xs, device))
    want = _call(torch, name, _t(xs))
    assert got.dtype is plugrad.float64
    tol = TORCH_OFF.get(name, {})
    _same(_host(got), want.numpy(), rtol=tol.get("rtol", 1e-11), atol=tol.get("atol", 0.0),
          where=f"{name} on {device}")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32_and_promotion(name, device):
    lo, hi = UNARY[name]
    xs = RNG.uniform(lo, hi, 8).tolist() + [0.0, -0.0]
    got = _call(plugrad, name, _p(xs, device, plugrad.float32))
    want = _call(torch, name, _t(xs, torch.float32))
    assert got.dtype is plugrad.float32
    _same(_host(got), want.numpy(), rtol=3e-6, atol=1e-6 if name in ("lgamma", "digamma") else 0.0,
          where=name)
    if name == "frac":  # PyTorch has no integer frac
        with pytest.raises(TypeError):
            plugrad.frac(_p([1, 2], device, plugrad.int64))
        return
    ints = [1, 2] if name != "acosh" else [1, 3]
    r = _call(plugrad, name, _p(ints, device, plugrad.int64))
    tr = _call(torch, name, torch.tensor(ints))
    assert r.dtype.name == str(tr.dtype).split(".")[1]
    _same(_host(r), tr.numpy(), rtol=3e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradients(name, device):
    lo, hi = UNARY[name]
    xs = RNG.uniform(lo, hi, 5 if device == "ref" else 40).tolist()
    if name in ("lgamma", "digamma"):  # keep off the poles
        xs = [x for x in xs if abs(x - round(x)) > 0.05 or x > 0.5]
    x = _p(xs, device, requires_grad=True)
    tx = _t(xs).requires_grad_()
    y, ty = _call(plugrad, name, x), _call(torch, name, tx)
    g = RNG.standard_normal(len(xs)).tolist()
    y.backward(_p(g, device))
    ty.backward(_t(g))
    _same(_host(x.grad), tx.grad.numpy(), rtol=1e-9, atol=1e-12, where=f"d{name}")


def test_gradients_at_edges(device):
    """sinc'(0) = 0, logit with eps is flat outside [eps, 1 - eps], NaN outside [0, 1]
    without, frac's gradient is 1."""
    x = _p([0.0, 0.5], device, requires_grad=True)
    plugrad.sinc(x).sum().backward()
    tx = _t([0.0, 0.5]).requires_grad_()
    torch.sinc(tx).sum().backward()
    _same(_host(x.grad), tx.grad.numpy(), rtol=1e-12)
    for eps in (None, 0.2):
        vals = [0.1, 0.5, 0.9, 1.5, -0.5]
        x = _p(vals, device, requires_grad=True)
        tx = _t(vals).requires_grad_()
        plugrad.logit(x, eps).sum().backward()
        torch.logit(tx, eps).sum().backward()
        _same(_host(x.grad), tx.grad.numpy(), rtol=1e-12, where=f"logit eps={eps}")
        _same(_host(plugrad.logit(x, eps)), torch.logit(tx, eps).detach().numpy(), rtol=1e-12)


def test_aliases_and_inplace(device):
    x = _p([0.25, -0.5], device)
    for alias, name in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                        ("arcsinh", "asinh"), ("arctanh", "atanh")):
        assert getattr(plugrad, alias)(x).tolist() == getattr(plugrad, name)(x).tolist()
        assert getattr(x, alias)().tolist() == getattr(x, name)().tolist()
        y = x.clone()
        assert getattr(y, name + "_")() is y and y.tolist() == getattr(plugrad, name)(x).tolist()
    assert plugrad.arccosh(x + 2).tolist() == plugrad.acosh(x + 2).tolist()
    assert plugrad.arctan2(x, x).tolist() == plugrad.atan2(x, x).tolist()
    sp = plugrad.special
    assert sp.gammaln(x).tolist() == plugrad.lgamma(x).tolist()
    assert sp.psi(x).tolist() == plugrad.digamma(x).tolist()
    assert sp.expit(x).tolist() == plugrad.sigmoid(x).tolist()
    t = _t([0.25, -0.5])
    for name in ("ndtr", "entr", "erfc", "erfinv", "logit", "sinc"):
        _same(_host(getattr(sp, name)(x)), getattr(torch.special, name)(t).numpy(),
              rtol=1e-12, where=name)
    _same(_host(sp.entr(_p([0.0, -1.0], device))), torch.special.entr(_t([0.0, -1.0])).numpy())
    _same(_host(sp.multigammaln(x + 3, 3)), torch.special.multigammaln(t + 3, 3).numpy(),
          rtol=1e-12)


# ---------------------------------------------------------------------- polygamma
@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma(n, device):
    xs = [0.3, 1.0, 2.5, 7.25, 30.0, -0.5, -1.25, -2.75] + RNG.uniform(0.1, 12, 6).tolist()
    got = plugrad.polygamma(n, _p(xs, device))
    want = torch.polygamma(n, _t(xs))
    # torch's zeta is off by up to 5e-10 (polygamma(1, 1) = 1.64493406764; pi^2/6 is
    # 1.64493406685): the tolerance is torch's
    _same(_host(got), want.numpy(), rtol=2e-9, where=f"polygamma({n})")
    assert _p(xs, device).polygamma(n).tolist() == got.tolist()
    x = _p(xs[:5], device, requires_grad=True)
    tx = _t(xs[:5]).requires_grad_()
    plugrad.polygamma(n, x).sum().backward()
    torch.polygamma(n, tx).sum().backward()
    _same(_host(x.grad), tx.grad.numpy(), rtol=2e-9, where=f"d polygamma({n})")


def test_polygamma_poles(device):
    # PyTorch's trigamma reflects through sin(pi x): finite and huge at the negative
    # integers (sin is not exactly 0 there), inf at 0; zeta's poles are exact
    xs = [0.0, -0.0, -3.0, -INF, NAN, INF, -1e20, -4e15]
    for n in (1, 2, 3):
        got = _host(plugrad.polygamma(n, _p(xs, device)))
        _same(got, torch.polygamma(n, _t(xs)).numpy(), rtol=1e-6, where=f"polygamma({n})")
    assert _host(plugrad.polygamma(1, _p([0.0, -0.0], device))).tolist() == [INF, INF]
    assert _host(plugrad.polygamma(2, _p([0.0, -1.0], device))).tolist() == [-INF, -INF]


def test_polygamma_large_negative_inputs_finish(device):
    """A zeta sum's direct terms were ``10 - min(x)``: the integers beyond 2**52 (poles)
    and a NaN beside them made the loop astronomically long or cut it short."""
    xs = [-1000.5, -1.7e308, NAN, -2.75, -3000.25]
    for n in (2, 3):
        _same(_host(plugrad.polygamma(n, _p(xs, device))),
              torch.polygamma(n, _t(xs)).numpy(), rtol=1e-8, where=f"polygamma({n})")
    with pytest.raises(RuntimeError, match="negative"):
        plugrad.polygamma(-1, _p([1.0], device))


# ---------------------------------------------------------------------- binary
BINARY = ["atan2", "hypot", "copysign", "xlogy", "logaddexp", "logaddexp2"]
PAIR_VALUES = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.5, 3.0, 1e300, -1e300, 5e-324]


def _binary(mod, name):
    if name == "xlog1py":
        return mod.special.xlog1py
    return getattr(mod, name)


@pytest.mark.parametrize("name", BINARY + ["xlog1py"])
def test_binary_special_pairs(name, device):
    a = [x for x in PAIR_VALUES for _ in PAIR_VALUES]
    b = [y for _ in PAIR_VALUES for y in PAIR_VALUES]
    got = _binary(plugrad, name)(_p(a, device), _p(b, device))
    want = _binary(torch, name)(_t(a), _t(b))
    _same(_host(got), want.numpy(), rtol=1e-12, where=name)


@pytest.mark.parametrize("name", BINARY + ["xlog1py"])
def test_binary_gradients_and_dtypes(name, device):
    n = 4 if device == "ref" else 30
    a = RNG.uniform(-3, 3, n).tolist() + [0.0]
    b = RNG.uniform(0.2, 3, n).tolist() + [1.5]
    x, y = _p(a, device, requires_grad=True), _p(b, device, requires_grad=True)
    tx, ty = _t(a).requires_grad_(), _t(b).requires_grad_()
    out, tout = _binary(plugrad, name)(x, y), _binary(torch, name)(tx, ty)
    _same(_host(out), tout.detach().numpy(), rtol=1e-12, where=name)
    g = RNG.standard_normal(len(a)).tolist()
    out.backward(_p(g, device))
    tout.backward(_t(g))
    _same(_host(x.grad), tx.grad.numpy(), rtol=1e-9, atol=1e-12, where=f"{name} d/da")
    _same(_host(y.grad), ty.grad.numpy(), rtol=1e-9, atol=1e-12, where=f"{name} d/db")
    f32 = _binary(plugrad, name)(_p(a, device, plugrad.float32), _p(b, device, plugrad.float32))
    assert f32.dtype is plugrad.float32
    if name in ("hypot", "logaddexp", "logaddexp2"):  # floating only, as in PyTorch
        with pytest.raises(TypeError):
            _binary(plugrad, name)(_p([1, 2], device, plugrad.int64), _p([1, 2], device,
                                                                           plugrad.int64))
    else:
        ints = _binary(plugrad, name)(_p([1, 2], device, plugrad.int64),
                                      _p([3, 0], device, plugrad.int64))
        tints = _binary(torch, name)(torch.tensor([1, 2]), torch.tensor([3, 0]))
        assert ints.dtype.name == str(tints.dtype).split(".")[1]
        _same(_host(ints), tints.numpy(), rtol=1e-6)


def test_binary_with_numbers(device):
    x = _p([0.0, 0.5, 2.0], device, requires_grad=True)
    tx = _t([0.0, 0.5, 2.0]).requires_grad_()
    for f, tf in ((lambda v: plugrad.xlogy(v, 2.0), lambda v: torch.xlogy(v, 2.0)),
                  (lambda v: plugrad.xlogy(2, v), lambda v: torch.xlogy(2, v)),
                  (lambda v: plugrad.copysign(v, -0.0), lambda v: torch.copysign(v, -0.0)),
                  (lambda v: plugrad.float_power(v, 2), lambda v: torch.float_power(v, 2)),
                  (lambda v: plugrad.float_power(2, v), lambda v: torch.float_power(2, v))):
        out, tout = f(x), tf(tx)
        assert out.dtype.name == str(tout.dtype).split(".")[1]
        _same(_host(out), tout.detach().numpy(), rtol=1e-12)
        out.sum().backward()
        tout.sum().backward()
        _same(_host(x.grad), tx.grad.numpy(), rtol=1e-12)
        x.grad = None
        tx.grad = None
    assert plugrad.float_power(_p([2, 3], device, plugrad.int32), 2).dtype is plugrad.float64
    assert plugrad.true_divide(_p([1, 2], device, plugrad.int64), 2).tolist() == [0.5, 1.0]


# ---------------------------------------------------------------------- bits
INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


def _edges(dtype):
    info = np.iinfo(dtype)
    vals = [int(info.min), int(info.min) + 1, int(info.max), int(info.max) - 1, 0, 1, 2, 6, 85]
    return vals + ([-1, -2, -86] if info.min < 0 else [])


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bitwise_every_integer_dtype(dtype, device):
    vals = _edges(dtype)
    a = [x for x in vals for _ in vals]
    b = [y for _ in vals for y in vals]
    pa, pb = _p(a, device, getattr(plugrad, dtype)), _p(b, device, getattr(plugrad, dtype))
    ta, tb = torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(b, dtype=getattr(
        torch, dtype))
    for op in ("__and__", "__or__", "__xor__"):
        got, want = getattr(pa, op)(pb), getattr(ta, op)(tb)
        assert got.dtype.name == dtype and got.tolist() == want.tolist(), op
    assert (~pa).tolist() == (~ta).tolist() and plugrad.bitwise_not(pa).dtype.name == dtype
    assert (pa & 3).tolist() == (ta & 3).tolist() and (5 | pa).tolist() == (5 | ta).tolist()
    assert plugrad.bitwise_xor(pa, 1).tolist() == torch.bitwise_xor(ta, 1).tolist()


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_shifts_every_integer_dtype(dtype, device):
    bits = np.iinfo(dtype).bits
    vals = _edges(dtype)
    shifts = list(range(0, bits + 2)) + [2 * bits] + ([] if dtype == "uint8" else [-1, -5])
    a = [x for x in vals for _ in shifts]
    s = [y for _ in vals for y in shifts]
    pa, ps = _p(a, device, getattr(plugrad, dtype)), _p(s, device, getattr(plugrad, dtype))
    ta, ts = (torch.tensor(a, dtype=getattr(torch, dtype)),
              torch.tensor(s, dtype=getattr(torch, dtype)))
    assert (pa << ps).tolist() == (ta << ts).tolist()
    assert (pa >> ps).tolist() == (ta >> ts).tolist()
    assert plugrad.bitwise_left_shift(pa, ps).dtype.name == dtype
    for k in (0, 1, bits - 1, bits, -1, 200):
        assert (pa << k).tolist() == (ta << k).tolist(), k
        assert (pa >> k).tolist() == (ta >> k).tolist(), k
    assert (3 << ps[:bits - 2]).tolist() == (3 << ts[:bits - 2]).tolist()


def test_bitwise_report_23(device):
    x = plugrad.tensor([6, 3], device=device)
    assert (x & 2).tolist() == [2, 2]
    assert (x | plugrad.tensor([1, 8], device=device)).tolist() == [7, 11]
    assert plugrad.bitwise_xor(x, x).tolist() == [0, 0]
    assert (x << 1).tolist() == [12, 6] and (x >> 1).tolist() == [3, 1]
    y = x.clone()
    y <<= 2
    y |= 1
    y ^= 4
    y &= 0xFF
    assert y.tolist() == [29, 9]
    y >>= 1
    assert y.tolist() == [14, 4]
    z = x.clone()
    assert z.bitwise_and_(3) is z and z.tolist() == [2, 3]
    b = plugrad.tensor([True, False], device=device)
    assert (b & True).tolist() == [True, False] and (b ^ b).tolist() == [False, False]
    assert (~b).tolist() == [False, True] and (b | False).dtype is plugrad.bool
    assert (b << 1).tolist() == [2, 0] and (b << 1).dtype is plugrad.int64


def test_bitwise_errors(device):
    f = plugrad.tensor([1.5], device=device)
    for fn in (lambda: f & 1, lambda: f << 1, lambda: ~f, lambda: f >> f,
               lambda: plugrad.bitwise_or(f, f)):
        with pytest.raises(TypeError, match="not implemented for 'Float'"):
            fn()
    b = plugrad.tensor([True], device=device)
    with pytest.raises(TypeError, match="Bool"):
        b << b


# ---------------------------------------------------------------------- bool operands
def test_bool_operands_report_26(device):
    b = plugrad.tensor([True, False], device=device)
    tb = torch.tensor([True, False])
    cases = [(lambda m, x: x % m.tensor([2, 2])), (lambda m, x: m.pow(x, 2.0)),
             (lambda m, x: m.tensor([3.0]) // m.tensor([True])), (lambda m, x: m.pow(x, 2)),
             (lambda m, x: m.fmod(x, 2.0)), (lambda m, x: m.pow(2, x)),
             (lambda m, x: m.remainder(x, m.tensor([2.0, 3.0]))), (lambda m, x: x // 2)]
    for case in cases:
        got = case(_Dev(device), b)
        want = case(torch, tb)
        assert got.dtype.name == str(want.dtype).split(".")[1]
        assert got.tolist() == want.tolist()
    for bad in (lambda m, x: m.pow(x, x), lambda m, x: x % x, lambda m, x: m.fmod(x, True),
                lambda m, x: x // x):
        with pytest.raises(TypeError, match="Bool"):
            bad(_Dev(device), b)


class _Dev:
    """``plugrad`` with ``tensor`` creating on one device (for the cases above)."""

    def __init__(self, device):
        self.device = device

    def tensor(self, data):
        return plugrad.tensor(data, device=self.device)

    def __getattr__(self, name):
        return getattr(plugrad, name)


# ---------------------------------------------------------------------- finfo / iinfo
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(dtype):
    ours, theirs = plugrad.finfo(getattr(plugrad, dtype)), torch.finfo(getattr(torch, dtype))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_iinfo(dtype):
    ours, theirs = plugrad.iinfo(getattr(plugrad, dtype)), torch.iinfo(getattr(torch, dtype))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_type_info_defaults_and_errors():
    assert plugrad.finfo().dtype == "float32" and plugrad.finfo(plugrad.float32).eps == \
        torch.finfo().eps
    with pytest.raises(TypeError, match="floating point"):
        plugrad.finfo(plugrad.int32)
    with pytest.raises(TypeError, match="integer"):
        plugrad.iinfo(plugrad.float32)
    with pytest.raises(TypeError, match="bool"):
        plugrad.iinfo(plugrad.bool)
