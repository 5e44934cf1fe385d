"""The contract's clauses that no single sample against the reference can check.

The op database's samples (special values included) compare each kernel with the reference
backend; the clauses below check what needs more than one call or a statistic: random
streams (range, seeding, independence, distribution), weak scalars, results rounded to
their dtype, host transfer that copies, devices. Each :class:`Clause` names the primitives
it covers and quotes the contract; the conformance suite runs every clause on every backend
and dtype it applies to (``test_contract.py``), and a backend that breaks one fails there.

The statistical checks use fixed seeds and bounds of about five standard deviations, so a
correct generator fails them with a probability below one in a million.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

from plugrad.testing._kernel_checks import no_warnings
from plugrad.testing._specials import FLOAT_NAMES, finfo, numpy_dtype

__all__ = ["Clause", "CLAUSES", "clauses", "check_random_kernel"]


@dataclasses.dataclass(frozen=True)
class Clause:
    """One rule of the contract, the primitives it constrains, and its check
    ``fn(k, dtype)`` (``k`` a kernel table), run for each dtype of ``dtypes`` that the
    backend declares."""
    name: str
    primitives: tuple
    dtypes: tuple
    text: str
    fn: Callable
    #: ``(device pattern, dtype pattern) -> reason``: known breaches, run as strict xfails
    xfails: tuple = ()

    def xfail_reason(self, device: str, dtype: str) -> str | None:
        import fnmatch
        for (dev, dt), reason in self.xfails:
            if fnmatch.fnmatchcase(device, dev) and fnmatch.fnmatchcase(dtype, dt):
                return reason
        return None

    @property
    def id(self) -> str:
        return f"{'+'.join(self.primitives)}:{self.name}"


CLAUSES: list[Clause] = []


def clause(name, primitives, dtypes, text, xfails=None):
    def deco(fn):
        CLAUSES.append(Clause(name, tuple(primitives), tuple(dtypes), text, fn,
                              tuple((xfails or {}).items())))
        return fn
    return deco


def clauses() -> list[Clause]:
    return list(CLAUSES)


def _host(k, x) -> np.ndarray:
    return np.array(k.to_numpy(x), copy=True)


def _draw(k, name, n, dtype) -> np.ndarray:
    with no_warnings(f"{name}(({n},), {dtype!r})"):
        out = getattr(k, name)((n,), dtype, None)
    return _host(k, out).astype(np.float64)


# ---------------------------------------------------------------------- random numbers
@clause("range [0, 1)", ["uniform"], FLOAT_NAMES,
        "uniform: samples from U[0, 1) of a floating dtype (1.0 never appears, not even "
        "by rounding to a narrow dtype)")
def _uniform_range(k, dtype):
    k.seed(11)
    n = 40000 if dtype in ("float16", "bfloat16") else 20000
    u = _draw(k, "uniform", n, dtype)
    assert np.isfinite(u).all(), f"uniform in {dtype}: non-finite samples"
    low, high = u.min(), u.max()
    assert low >= 0.0, f"uniform in {dtype}: a sample below 0 ({low!r})"
    assert high < 1.0, f"uniform in {dtype}: a sample equal to 1.0 or above ({high!r}): the " \
                       f"range is [0, 1), so a narrow dtype must not round up to 1"
    assert low < 0.01 and high > 0.99, \
        f"uniform in {dtype}: {n} samples span only [{low:.4g}, {high:.4g}] of [0, 1)"


@clause("uniform distribution", ["uniform"], FLOAT_NAMES,
        "uniform: samples from U[0, 1): equal chances in equal bins")
def _uniform_distribution(k, dtype):
    k.seed(12)
    n, bins = 16000, 16
    u = _draw(k, "uniform", n, dtype)
    counts = np.bincount(np.minimum((u * bins).astype(int), bins - 1), minlength=bins)
    expect = n / bins
    chi2 = float(((counts - expect) ** 2 / expect).sum())
    assert chi2 < 60, f"uniform in {dtype}: bin counts {counts.tolist()} are not uniform " \
                      f"(chi-square {chi2:.1f} with {bins - 1} degrees of freedom)"
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n), f"uniform mean {u.mean():.4f}"
    assert abs(u.var() - 1 / 12) < 0.006, f"uniform variance {u.var():.4f}, expected 1/12"


@clause("normal distribution", ["normal"], FLOAT_NAMES,
        "normal: samples from the standard normal distribution")
def _normal_distribution(k, dtype):
    k.seed(13)
    n = 16000
    z = _draw(k, "normal", n, dtype)
    assert np.isfinite(z).all(), f"normal in {dtype}: non-finite samples"
    assert abs(z.mean()) < 5 / math.sqrt(n), f"normal in {dtype}: mean {z.mean():.4f}"
    assert abs(z.std() - 1) < 0.03, f"normal in {dtype}: standard deviation {z.std():.4f}"
    for width, p in ((1.0, 0.682689), (2.0, 0.954500)):
        frac = float((np.abs(z) < width).mean())
        assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / n), \
            f"normal in {dtype}: {frac:.4f} of the samples lie within {width} of 0, a " \
            f"standard normal puts {p:.4f} there"
    skew = float(((z - z.mean()) ** 3).mean() / z.std() ** 3)
    assert abs(skew) < 0.1, f"normal in {dtype}: skewness {skew:.3f} (it is symmetric)"
    assert (z > 3).any() and (z < -3).any(), f"normal in {dtype}: no samples beyond 3 sigma"


@clause("same seed, same stream", ["seed", "uniform", "normal"], ("float32", "float64"),
        "seed: reset this backend's generator: the same seed gives the same stream "
        "afterwards (another seed another stream)")
def _seeding(k, dtype):
    def stream(s):
        k.seed(s)
        return [_draw(k, "uniform", 64, dtype), _draw(k, "normal", 32, dtype),
                _draw(k, "uniform", 8, dtype)]
    first, again, other = stream(2024), stream(2024), stream(2025)
    for a, b in zip(first, again):
        assert np.array_equal(a, b), f"seed(2024) twice gave two different streams in {dtype}"
    assert not np.array_equal(first[0], other[0]), \
        f"seed(2024) and seed(2025) gave the same stream in {dtype}"
    k.seed(2024)
    _draw(k, "uniform", 5, dtype)
    k.seed(2024)  # a reset in the middle of a stream starts it again
    assert np.array_equal(_draw(k, "uniform", 64, dtype), first[0]), \
        f"seed(2024) after some draws did not restart the stream in {dtype}"


@clause("independent draws", ["seed", "uniform", "normal"], ("float32", "float64"),
        "uniform/normal: each call continues the stream: successive draws, elements within "
        "a draw and the streams of different seeds are uncorrelated")
def _independence(k, dtype):
    n = 4000
    bound = 5 / math.sqrt(n)
    for name in ("uniform", "normal"):
        k.seed(5)
        a, b = _draw(k, name, n, dtype), _draw(k, name, n, dtype)
        assert not np.array_equal(a, b), f"{name}: two successive draws are equal"
        for label, x, y in (("successive draws", a, b), ("neighbouring elements", a[:-1], a[1:])):
            r = float(np.corrcoef(x, y)[0, 1])
            assert abs(r) < bound, f"{name} in {dtype}: {label} are correlated (r = {r:.3f})"
        assert len(np.unique(a)) > n * 0.9 or dtype == "float16", \
            f"{name} in {dtype}: only {len(np.unique(a))} distinct values in {n} samples"
        k.seed(6)
        c = _draw(k, name, n, dtype)
        r = float(np.corrcoef(a, c)[0, 1])
        assert abs(r) < bound, f"{name} in {dtype}: seeds 5 and 6 give correlated streams " \
                               f"(r = {r:.3f})"


def check_random_kernel(op, k, dtype: str) -> int:
    """The op database's random kernels: shape, dtype, finiteness (and [0, 1)) per sample."""
    from plugrad.testing._kernel_checks import _check_array_types, _materialize
    where = f"{op.name} on {k.device_type} in {dtype}"
    if op.name == "seed":
        _seeding(k, dtype)
        return 1
    k.seed(99)
    n = 0
    for s in op.samples(k.device_type, dtype):
        args = _materialize(s.args, k, dtype, upcast=False)
        with no_warnings(where):
            out = op.op(k, *args)
        _check_array_types(k, out, where)
        assert isinstance(out.shape, tuple), f"{where}: shape {out.shape!r} is not a tuple"
        vals = np.asarray(k.to_numpy(out))
        assert k.backend.dtype_of(out) == dtype, \
            f"{where}: dtype {k.backend.dtype_of(out)}, expected {dtype}"
        assert vals.shape == tuple(s.args[0]), f"{where}: shape {vals.shape}, expected {s.args[0]}"
        assert np.isfinite(vals).all(), f"{where}: non-finite samples"
        if op.name == "uniform":
            assert ((vals >= 0) & (vals < 1)).all(), f"{where}: samples outside [0, 1)"
        n += 1
    return n


# ---------------------------------------------------------------------- dtypes and scalars
_WEAK_OPS = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "lt", "floordiv",
             "remainder")


@clause("weak scalars take the array's dtype", _WEAK_OPS + ("where",), FLOAT_NAMES,
        "A scalar is 'weak': it takes the array's dtype (it is rounded to it first; the "
        "result has the array's dtype)")
def _weak_scalars(k, dtype):
    rng = np.random.default_rng(3)
    host = rng.uniform(0.5, 2.0, 48).astype(numpy_dtype(dtype))
    x = k.from_numpy(host, dtype, None)
    for v in (0.1, 1 / 3, -2.7, 1e-3):
        full = k.full((48,), v, dtype, None)
        for name in _WEAK_OPS:
            fn = getattr(k, name)
            for args, same in (((x, v), (x, full)), ((v, x), (full, x))):
                where = f"{name}({'x, ' if args[0] is x else ''}{v!r}{', x' if args[0] is not x else ''}) in {dtype}"
                with no_warnings(where):
                    got, want = fn(*args), fn(*same)
                want_dt = "bool" if name in ("eq", "lt") else dtype
                assert k.backend.dtype_of(got) == want_dt, \
                    f"{where}: result dtype {k.backend.dtype_of(got)}, expected {want_dt}"
                a, b = _host(k, got), _host(k, want)
                bad = ~((a == b) | (np.isnan(a.astype(float)) & np.isnan(b.astype(float))))
                assert not bad.any(), \
                    f"{where}: differs from the same op with the scalar as a {dtype} array at " \
                    f"{int(bad.sum())} of 48 elements (e.g. x = {host[bad][0]!r}: " \
                    f"{a[bad][0]!r} vs {b[bad][0]!r}): the scalar was not rounded to {dtype}"
    cond = k.from_numpy(rng.random(48) < 0.5, "bool", None)
    a, b = _host(k, k.where(cond, x, 0.1)), _host(k, k.where(cond, x, k.full((48,), 0.1, dtype,
                                                                                None)))
    assert np.array_equal(a, b), f"where(cond, x, 0.1) in {dtype}: the scalar was not " \
                                 f"rounded to {dtype}"


@clause("results rounded to the dtype", ("add", "sub", "mul", "div", "sum", "matmul", "eq"),
        ("float16", "bfloat16", "float32"),
        "Dtypes cross the boundary as names: a float32 (float16, bfloat16) array holds "
        "float32 values, each result rounded to them")
def _rounded(k, dtype):
    _, _, _, bits = finfo(dtype)
    tiny = 3 * 2.0 ** -(bits + 2)  # 3/8 of a unit in the last place of 1.0
    one = k.full((1,), 1.0, dtype, None)
    small = k.full((1,), tiny, dtype, None)
    third = k.div(one, k.full((1,), 3.0, dtype, None))
    checks = [
        ("add(1, tiny) == 1", k.eq(k.add(one, small), one)),
        ("sub(add(1, tiny), 1) == 0", k.eq(k.sub(k.add(one, small), one), 0.0)),
        ("sum([1, tiny]) == 1", k.eq(k.sum(k.concat([one, small], 0), None, True), one)),
        ("matmul([[1, 1]], [[1], [tiny]]) == 1",
         k.eq(k.reshape(k.matmul(k.reshape(k.concat([one, one], 0), (1, 2)),
                                 k.reshape(k.concat([one, small], 0), (2, 1))), (1,)), one)),
    ]
    for label, flag in checks:
        assert bool(_host(k, flag).all()), \
            f"{label} fails in {dtype}: results are not rounded to {dtype} (kept at a " \
            f"higher precision?)"
    wide = _host(k, k.astype(third, "float64"))[0] if "float64" in k.dtypes else None
    if wide is not None and dtype != "bfloat16":
        want = float(np.array(1 / 3, numpy_dtype(dtype)))
        assert wide == want, f"div(1, 3) in {dtype} widened to float64 is {wide!r}, the " \
                             f"{dtype} value is {want!r}"


@clause("assign copies an overlapping value first", ("assign",), ("int64", "float32"),
        "assign: overlap between value and dst must give the result of copying value first")
def _assign_overlap(k, dtype):
    for shift, want in ((1, [0, 0, 1, 2, 3, 4]), (-1, [1, 2, 3, 4, 5, 5])):
        dst = k.from_numpy(np.arange(6).astype(numpy_dtype(dtype)), dtype, None)
        src, tgt = (slice(0, 5, 1), slice(1, 6, 1)) if shift > 0 else \
            (slice(1, 6, 1), slice(0, 5, 1))
        value = k.slice(dst, (src,))  # may be a view of dst
        got = _host(k, k.assign(dst, (tgt,), value)).tolist()
        assert got == want, f"assign(dst, ({tgt},), dst[{src}]) gave {got}, expected {want} " \
                            f"(the value overlaps dst: it must be read before it is written)"


# ---------------------------------------------------------------------- transfer, devices
@clause("from_numpy copies", ("from_numpy",), ("bool", "int64", "float32", "float64"),
        "from_numpy: a new array holding a (the caller may reuse its array)")
def _from_numpy_copies(k, dtype):
    a = np.arange(6).reshape(2, 3).astype(numpy_dtype(dtype))
    x = k.from_numpy(a, dtype, None)
    before = _host(k, x)
    a[...] = 0
    assert np.array_equal(_host(k, x), before), \
        "from_numpy shares memory with its argument: writing the NumPy array changed it"


@clause("host transfer keeps every value", ("from_numpy", "to_numpy"), FLOAT_NAMES,
        "to_numpy: the values of x as a NumPy array of the dtype (bfloat16 crosses as "
        "float32), bit for bit: NaN, infinities, -0.0, subnormals")
def _round_trip(k, dtype):
    from plugrad.testing._specials import float_specials
    a = np.array(float_specials(dtype), dtype=numpy_dtype(dtype))
    back = np.asarray(k.to_numpy(k.from_numpy(a, dtype, None)))
    assert back.dtype == numpy_dtype(dtype), f"to_numpy gave {back.dtype} for {dtype}"
    same = (back == a) & (np.signbit(back) == np.signbit(a)) | (np.isnan(back) & np.isnan(a))
    assert same.all(), f"from_numpy/to_numpy changed {a[~same].tolist()} into " \
                       f"{back[~same].tolist()} in {dtype}"


@clause("device indices", ("from_numpy", "full", "uniform", "device_count"), ("float32",),
        "Creation primitives receive the device index (or None for the default); "
        "device_count() devices exist")
def _devices(k, dtype):
    n = k.backend.device_count()
    assert isinstance(n, int) and n >= 1, f"device_count() is {n!r}, expected an int >= 1"
    for index in (None, 0, n - 1):
        x = k.from_numpy(np.ones(3, np.float32), dtype, index)
        y = k.full((3,), 1.0, dtype, index)
        u = k.uniform((3,), dtype, index)
        assert _host(k, x).tolist() == _host(k, y).tolist() == [1.0] * 3, \
            f"creation on device {index} gave wrong values"
        assert _host(k, u).shape == (3,)
