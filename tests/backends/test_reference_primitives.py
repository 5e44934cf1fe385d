"""The reference backend against NumPy: every required primitive and optional kernel.

Float results are compared with NumPy computed in float64 and rounded to the dtype where
NumPy's own float32 arithmetic would be the less accurate side (sums, products, matmul).
"""
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from plugrad.backends.contract import Backend, optional_kernels, required_primitives
from plugrad.backends.reference import RefArray, ReferenceBackend

B = ReferenceBackend()
INTS = ["int32", "int64"]
FLOATS = ["float32", "float64"]
NUMS = INTS + FLOATS
RTOL = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-13}
INF, NAN = math.inf, math.nan
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, 100.0, -100.0, 1e30,
         -1e30, 750.0, INF, -INF, NAN]
RNG = np.random.default_rng(0)


def rand(shape, dtype, lo=-5, hi=5):
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype in INTS:
        return RNG.integers(lo, hi, shape).astype(dtype)
    return RNG.uniform(lo, hi, shape).astype(dtype)


def ref(a, dtype=None):
    a = np.asarray(a)
    return B.from_numpy(a, dtype or str(a.dtype), None)


def npx(fn, *args, **kw):
    """NumPy without floating-point warnings (the reference never warns either)."""
    with np.errstate(all="ignore"):
        return fn(*args, **kw)


def check(got, want, dtype=None, rtol=None, atol=0.0):
    """``got`` (a RefArray) equals ``want`` in shape, dtype and values; NaN matches NaN."""
    want = np.asarray(want)
    if dtype is not None:
        want = npx(want.astype, dtype)
    assert isinstance(got, RefArray)
    assert got.shape == want.shape and got.dtype == str(want.dtype), (got, want)
    out = B.to_numpy(got)
    assert out.dtype == want.dtype and out.shape == want.shape
    if want.dtype.kind == "f":
        assert_allclose(out, want, rtol=rtol or RTOL[str(want.dtype)], atol=atol, equal_nan=True)
    else:
        assert_array_equal(out, want)


def edge_pairs(dtype):
    """Every pair of edge values, as two flat arrays."""
    a, b = np.meshgrid(np.array(EDGES, dtype), np.array(EDGES, dtype))
    return a.ravel(), b.ravel()


# ====================================================================== the backend itself
def test_backend_implements_the_contract():
    assert not ReferenceBackend.__abstractmethods__
    assert (B.name, B.device_type, B.array_type) == ("reference", "ref", RefArray)
    assert B.dtypes == {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                        "float64"}
    for name in required_primitives():
        assert getattr(ReferenceBackend, name) is not getattr(Backend, name)


def test_refarray_basics():
    x = ref(np.arange(6, dtype="int32").reshape(2, 3))
    assert (x.shape, x.dtype, x.ndim, x.size) == ((2, 3), "int32", 2, 6)
    assert "int32" in repr(x) and B.dtype_of(x) == "int32"
    s = ref(np.float64(2.5))
    assert (s.shape, s.ndim, s.size) == ((), 0, 1)
    with pytest.raises(ValueError):
        RefArray((2, 2), "float32", [1.0])


# ====================================================================== transfer, creation
@pytest.mark.parametrize("dtype", ["bool", "float16"] + NUMS)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3, 4)])
def test_numpy_round_trip(dtype, shape):
    a = rand(shape, dtype)
    check(ref(a), a)


def test_from_numpy_casts():
    f = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 1e5], "float64")
    check(ref(f, "int32"), f.astype("int32"))
    check(ref(f, "bool"), f != 0)
    check(ref(np.array([NAN, 0.0, -0.0]), "bool"), [True, False, False])
    check(ref(f, "float16"), f, "float16")  # 1e5 overflows float16 to inf
    check(ref(np.array([0.1, 1e40, -1e40]), "float32"), [0.1, 1e40, -1e40], "float32")
    big = np.array([2**31, 2**31 + 5, -2**31 - 1, 2**40], "int64")
    check(ref(big, "int32"), big.astype("int32"))         # two's complement wraparound
    check(ref(np.array([True, False]), "float32"), [1.0, 0.0], "float32")


@pytest.mark.parametrize("dtype", ["bool", "float16"] + NUMS)
def test_full(dtype):
    check(B.full((2, 3), 1, dtype, None), np.full((2, 3), 1, dtype))
    check(B.full((), 0, dtype, None), np.full((), 0, dtype))
    check(B.full((0, 2), 1, dtype, None), np.full((0, 2), 1, dtype))


@pytest.mark.parametrize("src", ["bool"] + NUMS)
@pytest.mark.parametrize("dst", ["bool", "float16"] + NUMS)
def test_astype(src, dst):
    a = rand((4, 5), src, -100, 100)
    if src in FLOATS:
        a[0, :3] = [2.5, -2.5, -0.7]  # truncation toward zero
    got = B.astype(ref(a), dst)
    check(got, a.astype(dst))


def test_astype_edges():
    check(B.astype(ref(np.array([1e10, -1e10, 70000.0])), "float16"), [INF, -INF, INF], "float16")
    check(B.astype(ref(np.array([NAN, INF, 0.0])), "bool"), [True, True, False])
    check(B.astype(ref(np.array([2**31 - 1, -2**31], "int64")), "float32"),
          np.array([2**31 - 1, -2**31], "float32"))


# ====================================================================== unary
UNARY_FLOAT = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
               "tanh": np.tanh, "floor": np.floor, "round": np.round}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_float_unary(name, dtype):
    x = np.concatenate([rand((30,), dtype), np.array(EDGES, dtype)])
    check(getattr(B, name)(ref(x)), npx(UNARY_FLOAT[name], x))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_float_unary_shapes(name, dtype):
    for shape in [(), (0,), (2, 0, 3), (2, 3)]:
        x = np.abs(rand(shape, dtype))
        check(getattr(B, name)(ref(x)), npx(UNARY_FLOAT[name], x))


def test_unary_ieee_edges():
    x = np.array([0.0, -0.0, -1.0, INF, -INF, NAN, 1000.0, 89.0])
    check(B.log(ref(x)), [-INF, -INF, NAN, INF, NAN, NAN, math.log(1000), math.log(89)])
    check(B.exp(ref(x, "float32")), npx(np.exp, x.astype("float32")))  # exp(89) overflows f32
    check(B.sqrt(ref(x)), [0.0, -0.0, NAN, INF, NAN, NAN, math.sqrt(1000), math.sqrt(89)])
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997])
    check(B.round(ref(halves, "float32")), np.round(halves.astype("float32")))


@pytest.mark.parametrize("dtype", NUMS)
def test_neg_abs(dtype):
    x = rand((3, 4), dtype)
    check(B.neg(ref(x)), -x)
    check(B.abs(ref(x)), np.abs(x))
    check(B.neg(ref(x[:0])), -x[:0])


@pytest.mark.parametrize("dtype", INTS)
def test_neg_abs_wrap(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0], dtype)
    check(B.neg(ref(x)), npx(np.negative, x))  # -min wraps to min
    check(B.abs(ref(x)), npx(np.abs, x))


def test_logical_not():
    x = rand((3, 4), "bool")
    check(B.logical_not(ref(x)), ~x)
    check(B.logical_not(ref(np.bool_(True))), np.bool_(False))


# ====================================================================== binary
ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
SHAPE_PAIRS = [((3, 4), (3, 4)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((4,), ()), ((0, 3), (1, 3)),
               ((), ())]


@pytest.mark.parametrize("shapes", SHAPE_PAIRS)
@pytest.mark.parametrize("dtype", NUMS)
@pytest.mark.parametrize("name", sorted(ARITH))
def test_arith(name, dtype, shapes):
    a, b = rand(shapes[0], dtype), rand(shapes[1], dtype)
    check(getattr(B, name)(ref(a), ref(b)), ARITH[name](a, b))


@pytest.mark.parametrize("dtype", NUMS)
@pytest.mark.parametrize("name", sorted(ARITH))
def test_arith_scalar(name, dtype):
    a = rand((2, 3), dtype)
    s = 3 if dtype in INTS else 0.1  # weak: 0.1 is rounded to float32 for a float32 array
    check(getattr(B, name)(ref(a), s), ARITH[name](a, s))
    check(getattr(B, name)(s, ref(a)), ARITH[name](s, a))


@pytest.mark.parametrize("dtype", INTS)
def test_int_wraparound(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max // 2 + 7, -3], dtype)
    b = np.array([1, -1, 3, info.max], dtype)
    for name, fn in ARITH.items():
        check(getattr(B, name)(ref(a), ref(b)), npx(fn, a, b))
    check(B.add(ref(a), 1), npx(np.add, a, np.array(1, dtype)))


def test_broadcast_mismatch_raises():
    with pytest.raises(ValueError):
        B.add(ref(np.zeros((2, 3))), ref(np.zeros((4,))))
    with pytest.raises(ValueError):
        B.add(ref(np.zeros((0,))), ref(np.zeros((2,))))


@pytest.mark.parametrize("dtype", FLOATS)
def test_div(dtype):
    a, b = rand((3, 4), dtype), rand((4,), dtype)
    check(B.div(ref(a), ref(b)), a / b)
    check(B.div(2.0, ref(b)), np.divide(2.0, b))
    ea, eb = edge_pairs(dtype)
    check(B.div(ref(ea), ref(eb)), npx(np.divide, ea, eb))


@pytest.mark.parametrize("dtype", NUMS)
def test_floordiv(dtype):
    a = rand((3, 4), dtype, -20, 20)
    b = rand((4,), dtype, 1, 6) * np.array([1, -1, 1, -1], dtype)
    check(B.floordiv(ref(a), ref(b)), a // b)
    check(B.floordiv(ref(a), 3), a // np.array(3, dtype))
    check(B.floordiv(-7, ref(b)), np.array(-7, dtype) // b)
    if dtype in FLOATS:
        ea, eb = edge_pairs(dtype)
        check(B.floordiv(ref(ea), ref(eb)), npx(np.floor_divide, ea, eb))
        one = np.array([1.0], dtype)  # 1 // 0.1 is 9, not floor(1 / 0.1) = 10
        check(B.floordiv(ref(one), 0.1), np.floor_divide(one, np.array(0.1, dtype)))
    else:
        m = np.array([np.iinfo(dtype).min], dtype)
        check(B.floordiv(ref(m), -1), m)  # wraps like NumPy


@pytest.mark.parametrize("dtype", NUMS)
def test_pow(dtype):
    if dtype in INTS:
        a, b = rand((3, 4), dtype), rand((4,), dtype, 0, 6)
        check(B.pow(ref(a), ref(b)), a ** b)
        big = np.array([3, -3, 7], dtype)
        check(B.pow(ref(big), 41), npx(np.power, big, np.array(41, dtype)))  # wraps
        check(B.pow(ref(np.array([0, 0], dtype)), 0), np.array([1, 1], dtype))
    else:
        a, b = rand((3, 4), dtype, 0.1, 5), rand((4,), dtype, -3, 3)
        check(B.pow(ref(a), ref(b)), a ** b)
        check(B.pow(2.0, ref(b)), np.power(np.array(2.0, dtype), b))
        ea, eb = edge_pairs(dtype)
        check(B.pow(ref(ea), ref(eb)), npx(np.power, ea, eb))


@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
@pytest.mark.parametrize("name,fn", [("eq", np.equal), ("lt", np.less)])
def test_compare(name, fn, dtype):
    a, b = rand((3, 1, 4), dtype, -2, 2), rand((2, 4), dtype, -2, 2)
    check(getattr(B, name)(ref(a), ref(b)), fn(a, b))
    if dtype != "bool":
        check(getattr(B, name)(ref(a), 1), fn(a, np.array(1, dtype)))
        check(getattr(B, name)(1, ref(a)), fn(np.array(1, dtype), a))
    if dtype in FLOATS:
        ea, eb = edge_pairs(dtype)
        check(getattr(B, name)(ref(ea), ref(eb)), fn(ea, eb))  # NaN is unequal to everything


def test_logical_and():
    a, b = rand((3, 1), "bool"), rand((4,), "bool")
    check(B.logical_and(ref(a), ref(b)), a & b)
    check(B.logical_and(ref(a), True), a)


@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_where(dtype):
    c, a, b = rand((3, 1, 1), "bool"), rand((1, 4, 1), dtype), rand((2,), dtype)
    check(B.where(ref(c), ref(a), ref(b)), np.where(c, a, b))
    s = True if dtype == "bool" else 1
    check(B.where(ref(c), s, ref(b)), np.where(c, np.array(s, dtype), b))
    check(B.where(ref(c), ref(a), s), np.where(c, a, np.array(s, dtype)))
    check(B.where(ref(np.bool_(True)), ref(a[:, :0]), s), a[:, :0])


# ====================================================================== reductions
AXES = [None, (), (0,), (2,), (0, 2), (0, 1, 2)]


def _np_axes(axes):
    return axes if axes is None else tuple(axes)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", AXES)
@pytest.mark.parametrize("dtype", NUMS)
def test_sum_prod(dtype, axes, keepdims):
    x = rand((2, 3, 4), dtype, -2, 3)
    wide = "float64" if dtype in FLOATS else dtype
    for name, fn in [("sum", np.sum), ("prod", np.prod)]:
        want = fn(x.astype(wide), axis=_np_axes(axes), keepdims=keepdims, dtype=wide)
        check(getattr(B, name)(ref(x), axes, keepdims), want, dtype)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", AXES)
@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_max(dtype, axes, keepdims):
    x = rand((2, 3, 4), dtype, -3, 3)
    check(B.max(ref(x), axes, keepdims), np.max(x, axis=_np_axes(axes), keepdims=keepdims))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, 2])
@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_argmax(dtype, axis, keepdims):
    x = rand((2, 3, 4), dtype, -2, 2)  # many ties: the first one wins
    check(B.argmax(ref(x), axis, keepdims), np.argmax(x, axis=axis, keepdims=keepdims))


def test_reductions_empty_and_0d():
    e = np.zeros((0, 3), "float32")
    check(B.sum(ref(e), (0,), False), np.zeros(3, "float32"))
    check(B.prod(ref(e), (0,), True), np.ones((1, 3), "float32"))
    check(B.sum(ref(e), (1,), False), np.zeros(0, "float32"))
    check(B.sum(ref(np.zeros((0,), "int64")), None, False), np.int64(0))
    s = np.float64(2.5)
    for name in ["sum", "prod", "max"]:
        check(getattr(B, name)(ref(s), None, False), s)
    check(B.argmax(ref(s), None, False), np.int64(0))
    check(B.cumsum(ref(e), 0), e)


def test_reductions_nan_inf():
    x = np.array([[1.0, NAN, 3.0, NAN], [INF, -INF, 0.0, 2.0], [-INF, -INF, -INF, 1.0]])
    check(B.max(ref(x), (1,), False), np.max(x, axis=1))
    check(B.argmax(ref(x), 1, False), np.argmax(x, axis=1))  # first NaN
    check(B.argmax(ref(x), None, False), np.argmax(x))
    check(B.sum(ref(x), (1,), False), npx(np.sum, x, axis=1))  # inf + -inf is NaN
    check(B.prod(ref(x), (0,), False), npx(np.prod, x, axis=0))
    check(B.cumsum(ref(x), 1), npx(np.cumsum, x, axis=1))
    big = np.array([1e308, 1e308, -1e308])
    check(B.sum(ref(big), None, False), np.float64(1e308))  # exact despite overflow midway
    check(B.sum(ref(np.array([1e308, 1e308])), None, False), np.float64(INF))
    check(B.sum(ref(np.array([1e308, 1e308, NAN])), None, False), np.float64(NAN))


def test_sum_is_accurate():
    x = np.array([1e8, 1.0, -1e8] * 5 + [0.1] * 10, "float32")
    check(B.sum(ref(x), None, False), np.float32(math.fsum(x.astype("float64"))))
    y = np.array([1e16, 1.0, -1e16, 1.0])
    assert B.to_numpy(B.sum(ref(y), None, False)) == 2.0


@pytest.mark.parametrize("dtype", INTS)
def test_int_reduction_wraparound(dtype):
    info = np.iinfo(dtype)
    x = np.array([[info.max, info.max, 5], [info.min, -1, 7]], dtype)
    for axes in [None, (0,), (1,)]:
        check(B.sum(ref(x), axes, False), np.sum(x, axis=axes, dtype=dtype))
        check(B.prod(ref(x), axes, False), npx(np.prod, x, axis=axes, dtype=dtype))
    check(B.cumsum(ref(x), 1), np.cumsum(x, axis=1, dtype=dtype))


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("dtype", NUMS)
def test_cumsum(dtype, axis):
    x = rand((2, 3, 4), dtype)
    wide = "float64" if dtype in FLOATS else dtype
    check(B.cumsum(ref(x), axis), np.cumsum(x.astype(wide), axis=axis, dtype=wide), dtype)


# ====================================================================== movement
@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_reshape_permute_broadcast(dtype):
    x = rand((2, 3, 4), dtype)
    check(B.reshape(ref(x), (4, 6)), x.reshape(4, 6))
    check(B.reshape(ref(x), (24,)), x.reshape(24))
    check(B.reshape(ref(x[0, 0, 0]), (1, 1)), x[0, 0, 0].reshape(1, 1))
    check(B.reshape(ref(x[:0]), (3, 0)), x[:0].reshape(3, 0))
    for axes in [(2, 0, 1), (0, 1, 2), (1, 0, 2)]:
        check(B.permute(ref(x), axes), np.transpose(x, axes))
    check(B.permute(ref(x[0, 0, 0]), ()), x[0, 0, 0])
    check(B.broadcast_to(ref(x[:, :1]), (5, 2, 3, 4)), np.broadcast_to(x[:, :1], (5, 2, 3, 4)))
    check(B.broadcast_to(ref(x[0, 0, 0]), (2, 2)), np.broadcast_to(x[0, 0, 0], (2, 2)))
    check(B.broadcast_to(ref(x[:, :1]), (2, 0, 4)), np.broadcast_to(x[:, :1], (2, 0, 4)))
    with pytest.raises(ValueError):
        B.broadcast_to(ref(x), (3, 3, 4))


@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_slice(dtype):
    x = rand((5, 6, 7), dtype)
    for key in [(slice(1, 4, 1), slice(0, 6, 2), slice(0, 7, 3)),
                (slice(0, 5, 1), slice(3, 3, 1), slice(6, 7, 1)),
                (slice(4, 5, 4), slice(1, 6, 5), slice(0, 7, 10))]:
        check(B.slice(ref(x), key), x[key])
    check(B.slice(ref(x[0, 0, 0]), ()), x[0, 0, 0])


@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_concat(dtype):
    parts = [rand((2, n, 3), dtype) for n in (1, 0, 4)]
    check(B.concat([ref(p) for p in parts], 1), np.concatenate(parts, axis=1))
    parts = [rand((n, 2), dtype) for n in (2, 3)]
    check(B.concat([ref(p) for p in parts], 0), np.concatenate(parts, axis=0))
    check(B.concat([ref(parts[0])], 1), parts[0])


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_gather(dtype, axis):
    x = rand((3, 4, 5), dtype)
    shape = list(x.shape)
    shape[axis] = 6
    index = RNG.integers(0, x.shape[axis], shape).astype("int64")
    check(B.gather(ref(x), axis, ref(index)), np.take_along_axis(x, index, axis))
    shape[axis] = 0
    empty = np.zeros(shape, "int64")
    check(B.gather(ref(x), axis, ref(empty)), np.take_along_axis(x, empty, axis))


def _np_scatter_add(x, axis, index, src):
    out = x.copy()
    pos = list(np.indices(index.shape))
    pos[axis] = index
    np.add.at(out, tuple(pos), src)
    return out


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", NUMS)
def test_scatter_add(dtype, axis):
    x = rand((3, 4), dtype)
    shape = [3, 4]
    shape[axis] = 7  # more entries than positions: repeated indices accumulate
    index = RNG.integers(0, x.shape[axis], shape).astype("int64")
    src = rand(shape, dtype)
    wide = "float64" if dtype in FLOATS else dtype
    want = _np_scatter_add(x.astype(wide), axis, index, src.astype(wide))
    got = B.scatter_add(ref(x), axis, ref(index), ref(src))
    check(got, want, dtype)
    check(B.scatter_add(ref(x), 0, ref(np.zeros((0, 4), "int64")), ref(x[:0])), x)


@pytest.mark.parametrize("dtype", NUMS)
def test_matmul(dtype):
    wide = "float64" if dtype in FLOATS else dtype
    for sa, sb in [((3, 4), (4, 2)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 0), (0, 2)),
                   ((1, 3, 4), (2, 4, 1)), ((0, 2, 3), (3, 3))]:
        a, b = rand(sa, dtype), rand(sb, dtype)
        check(B.matmul(ref(a), ref(b)), np.matmul(a.astype(wide), b.astype(wide)), dtype)
    with pytest.raises(ValueError):
        B.matmul(ref(np.zeros((2, 3))), ref(np.zeros((2, 3))))


@pytest.mark.parametrize("dtype", ["bool"] + NUMS)
def test_assign(dtype):
    x = rand((4, 5), dtype)
    cases = [((slice(1, 4, 2), slice(0, 5, 2)), rand((2, 3), dtype)),
             ((slice(1, 4, 2), slice(0, 5, 2)), rand((3,), dtype)),   # broadcast value
             ((slice(0, 2, 1),), rand((2, 5), dtype)),                # shorter key
             ((slice(2, 2, 1), slice(0, 5, 1)), rand((0, 5), dtype)),  # empty region
             ((), rand((1, 5), dtype)),                                # the whole array
             ((slice(3, 4, 1), slice(1, 5, 3)), 1)]                    # scalar
    for key, value in cases:
        want = x.copy()
        want[key] = value
        dst = ref(x)
        got = B.assign(dst, key, value if isinstance(value, int) else ref(value))
        assert got is dst
        check(got, want)
    dst = ref(x)
    check(B.assign(dst, (), dst), x)  # overlap: value is dst itself


# ====================================================================== random
@pytest.mark.parametrize("dtype", ["float16"] + FLOATS)
def test_random(dtype):
    b = ReferenceBackend()

    def draw(seed):
        b.seed(seed)
        u, n = b.uniform((50, 40), dtype, None), b.normal((2000,), dtype, None)
        return b.to_numpy(u), b.to_numpy(n)

    (u1, n1), (u2, n2) = draw(123), draw(123)
    assert_array_equal(u1, u2)
    assert_array_equal(n1, n2)
    assert u1.dtype == dtype and u1.shape == (50, 40) and n1.shape == (2000,)
    assert u1.min() >= 0 and u1.max() < 1 and abs(u1.mean() - 0.5) < 0.05
    assert abs(n1.mean()) < 0.1 and abs(n1.std() - 1) < 0.1
    assert not np.array_equal(draw(124)[0], u1)
    assert b.uniform((0, 3), dtype, None).shape == (0, 3)
    assert b.normal((), dtype, None).shape == ()


def test_random_default_seed_is_zero():
    a, b = ReferenceBackend(), ReferenceBackend()
    b.seed(0)
    assert_array_equal(a.to_numpy(a.normal((10,), "float64", None)),
                       b.to_numpy(b.normal((10,), "float64", None)))


# ====================================================================== optional kernels
OPTIONAL = {}
#: the optional kernels with a composite (the linalg ones have none: test_reference_linalg.py)
WITH_COMPOSITE = tuple(k for k in optional_kernels() if not k.startswith("linalg_"))


def optional(fn):
    """Register ``case_<kernel>``; every optional kernel of the contract must have one."""
    OPTIONAL[fn.__name__[len("case_"):]] = fn
    return fn


def floats_with_edges(dtype, shape=(30,)):
    return np.concatenate([rand(shape, dtype), np.array(EDGES, dtype)])


def _register_recurrent_cases():
    """``lstm``/``gru`` and their backward: cases in ``reference_recurrent_cases.py``."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    from reference_recurrent_cases import CASES
    for name, case in CASES.items():
        OPTIONAL[name] = (lambda c=case: c(B, ref, check))


_register_recurrent_cases()


def test_every_optional_kernel_is_tested():
    assert set(OPTIONAL) == set(WITH_COMPOSITE)


@pytest.mark.parametrize("name", WITH_COMPOSITE)
def test_optional_kernel(name):
    OPTIONAL[name]()


@optional
def case_copy():
    for dtype in ["bool"] + NUMS:
        x = rand((3, 4), dtype)
        r = ref(x)
        c = B.copy(r)
        assert c is not r and c.data is not r.data
        check(c, x)


@optional
def case_from_dlpack():
    """The composite copies host DLPack through ``from_numpy``; complex is refused."""
    for dtype in ["bool"] + NUMS:
        x = rand((2, 3), dtype)
        want = x.copy()
        r = B.from_dlpack(x, None)
        x[...] = x[::-1, ::-1]  # the result is a copy
        check(r, want)
    z = B.from_dlpack(np.array(2.5), None)
    assert z.shape == () and B.to_numpy(z).tolist() == 2.5
    with pytest.raises(TypeError, match="dtype complex128 is not one of backend 'reference'"):
        B.from_dlpack(np.zeros(2, complex), None)


@optional
def case_arange():
    check(B.arange(0, 10, 3, "int32", None), np.arange(0, 10, 3, dtype="int32"))
    check(B.arange(5, 0, -2, "int64", None), np.arange(5, 0, -2, dtype="int64"))
    check(B.arange(0.0, 2.0, 0.25, "float32", None), np.arange(0.0, 2.0, 0.25, dtype="float32"))
    check(B.arange(3, 3, 1, "float64", None), np.arange(3, 3, 1, dtype="float64"))


@optional
def case_ceil():
    for dtype in FLOATS:
        x = floats_with_edges(dtype)
        check(B.ceil(ref(x)), np.ceil(x))


@optional
def case_sign():
    for dtype in NUMS:
        x = floats_with_edges(dtype) if dtype in FLOATS else rand((20,), dtype)
        check(B.sign(ref(x)), np.sign(x))


@optional
def case_isnan():
    for dtype in NUMS:
        x = floats_with_edges(dtype) if dtype in FLOATS else rand((20,), dtype)
        check(B.isnan(ref(x)), np.isnan(x))


def _compare_case(name, fn):
    for dtype in NUMS:
        a, b = rand((3, 1, 4), dtype, -2, 2), rand((2, 4), dtype, -2, 2)
        check(getattr(B, name)(ref(a), ref(b)), fn(a, b))
        check(getattr(B, name)(ref(a), 0), fn(a, np.array(0, dtype)))
        check(getattr(B, name)(0, ref(a)), fn(np.array(0, dtype), a))
        if dtype in FLOATS:
            ea, eb = edge_pairs(dtype)
            check(getattr(B, name)(ref(ea), ref(eb)), fn(ea, eb))


@optional
def case_ne():
    _compare_case("ne", np.not_equal)


@optional
def case_gt():
    _compare_case("gt", np.greater)


@optional
def case_le():
    _compare_case("le", np.less_equal)


@optional
def case_ge():
    _compare_case("ge", np.greater_equal)


@optional
def case_logical_or():
    a, b = rand((3, 1), "bool"), rand((4,), "bool")
    check(B.logical_or(ref(a), ref(b)), a | b)
    for s in [False, True]:  # a scalar operand, as any binary primitive accepts
        check(B.logical_or(ref(a), s), a | s)
        check(B.logical_or(s, ref(b)), s | b)


@optional
def case_logical_xor():
    a, b = rand((3, 1), "bool"), rand((4,), "bool")
    check(B.logical_xor(ref(a), ref(b)), a ^ b)


@optional
def case_remainder():
    for dtype in NUMS:
        a = rand((3, 4), dtype, -20, 20)
        b = rand((4,), dtype, 1, 6) * np.array([1, -1, 1, -1], dtype)
        check(B.remainder(ref(a), ref(b)), np.remainder(a, b))
        check(B.remainder(ref(a), 3), np.remainder(a, np.array(3, dtype)))
        check(B.remainder(7, ref(b)), np.remainder(np.array(7, dtype), b))
        if dtype in FLOATS:
            ea, eb = edge_pairs(dtype)
            if isinstance(B, CompositeBackend):  # the composite's documented limit:
                exact = ~(np.abs(ea) >= np.abs(eb) * 2.0 ** (np.finfo(dtype).nmant + 1))
                ea, eb = ea[exact], eb[exact]   # inexact once |a / b| exceeds the mantissa
            check(B.remainder(ref(ea), ref(eb)), npx(np.remainder, ea, eb))
            if not isinstance(B, CompositeBackend):
                big = np.array([1e17, -1e17], dtype)
                check(B.remainder(ref(big), 3.0), np.remainder(big, np.array(3.0, dtype)))


@optional
def case_fmod():
    for dtype in NUMS:
        a = rand((3, 4), dtype, -20, 20)
        b = rand((4,), dtype, 1, 6) * np.array([1, -1, 1, -1], dtype)
        check(B.fmod(ref(a), ref(b)), np.fmod(a, b))
        check(B.fmod(ref(a), 3), np.fmod(a, np.array(3, dtype)))
        if dtype in FLOATS:
            ea, eb = edge_pairs(dtype)
            if isinstance(B, CompositeBackend):  # the remainder it builds on: inexact once
                exact = ~(np.abs(ea) >= np.abs(eb) * 2.0 ** (np.finfo(dtype).nmant + 1))
                ea, eb = ea[exact], eb[exact]   # |a / b| exceeds float64's mantissa
            check(B.fmod(ref(ea), ref(eb)), npx(np.fmod, ea, eb))
            big = np.array([1e8, -1e8], dtype)
            check(B.fmod(ref(big), 3.0), np.fmod(big, np.array(3.0, dtype)))


def _extremum_case(name, fn):
    for dtype in NUMS:
        a, b = rand((3, 1), dtype), rand((4,), dtype)
        check(getattr(B, name)(ref(a), ref(b)), fn(a, b))
        check(getattr(B, name)(ref(a), 1), fn(a, np.array(1, dtype)))
        check(getattr(B, name)(1, ref(a)), fn(np.array(1, dtype), a))
        if dtype in FLOATS:
            ea, eb = edge_pairs(dtype)
            check(getattr(B, name)(ref(ea), ref(eb)), fn(ea, eb))  # NaN propagates
            check(getattr(B, name)(ref(ea), NAN), fn(ea, np.array(NAN, dtype)))


@optional
def case_maximum():
    _extremum_case("maximum", np.maximum)


@optional
def case_minimum():
    _extremum_case("minimum", np.minimum)


@optional
def case_min():
    for dtype in ["bool"] + NUMS:
        x = rand((2, 3, 4), dtype, -3, 3)
        for axes in AXES:
            for keepdims in (False, True):
                check(B.min(ref(x), axes, keepdims), np.min(x, axis=axes, keepdims=keepdims))
    x = np.array([[1.0, NAN, -INF], [INF, 2.0, 0.0]])
    check(B.min(ref(x), (1,), False), np.min(x, axis=1))
    for dtype in INTS:
        x = np.array([0, np.iinfo(dtype).min, 5], dtype)
        check(B.min(ref(x), None, False), np.min(x))


@optional
def case_argmin():
    for dtype in ["bool"] + NUMS:
        x = rand((2, 3, 4), dtype, -2, 2)
        for axis in (None, 0, 2):
            for keepdims in (False, True):
                check(B.argmin(ref(x), axis, keepdims), np.argmin(x, axis=axis, keepdims=keepdims))
    x = np.array([[1.0, NAN, -INF, NAN], [INF, 2.0, 0.0, 0.0]])
    check(B.argmin(ref(x), 1, False), np.argmin(x, axis=1))
    for dtype in INTS:
        x = np.array([0, np.iinfo(dtype).min, 5], dtype)
        check(B.argmin(ref(x), None, False), np.argmin(x))


def _unary_case(name, want, dtypes=FLOATS, rtol=None):
    """``want`` is computed in float64 and rounded to the dtype."""
    for dtype in dtypes:
        x = floats_with_edges(dtype)
        check(getattr(B, name)(ref(x)), npx(want, x.astype("float64")), dtype,
              rtol=rtol and rtol[dtype])


@optional
def case_sigmoid():
    _unary_case("sigmoid", lambda x: 1 / (1 + np.exp(-x)),
                rtol={"float32": 1e-6, "float64": 1e-14})


@optional
def case_update_():
    for dtype in ("float32", "float64", "int64"):
        for op, fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
            a, b = rand((2, 3), dtype), rand((3,), dtype)
            dst = ref(a)
            out = B.update_(op, dst, ref(b))
            check(out, fn(a, b), dtype)
            check(dst if out is dst else out, fn(a, b), dtype)
        a = rand((2, 3), dtype)
        check(B.update_("mul", ref(a), 2), a * 2, dtype)
    a, b = rand((2, 3), "float64"), rand((2, 3), "float64")
    check(B.update_("div", ref(a), ref(b)), a / b, "float64")


@optional
def case_log1p():
    _unary_case("log1p", np.log1p)
    tiny = np.array([1e-10, -1e-10, 1e-30, 0.0], "float32")
    check(B.log1p(ref(tiny)), np.log1p(tiny))


@optional
def case_expm1():
    _unary_case("expm1", np.expm1)
    tiny = np.array([1e-10, -1e-10, 1e-30, 0.0], "float32")
    check(B.expm1(ref(tiny)), np.expm1(tiny))


@optional
def case_erf():
    erf = np.vectorize(math.erf, otypes=["float64"])
    _unary_case("erf", erf, rtol={"float32": 2e-6, "float64": 1e-13})
    x = np.linspace(-6, 6, 241)
    check(B.erf(ref(x)), erf(x), rtol=1e-14, atol=1e-16)


@optional
def case_pad():
    for dtype in ["bool"] + NUMS:
        x = rand((2, 3), dtype)
        check(B.pad(ref(x), ((1, 2), (0, 1)), 1), np.pad(x, ((1, 2), (0, 1)), constant_values=1))
        check(B.pad(ref(x[:0]), ((1, 0), (0, 0)), 0), np.pad(x[:0], ((1, 0), (0, 0))))


@optional
def case_flip():
    for dtype in ["bool"] + NUMS:
        x = rand((2, 3, 4), dtype)
        for axes in [(0,), (2,), (0, 1), ()]:
            check(B.flip(ref(x), axes), np.flip(x, axes))


@optional
def case_take():
    for dtype in ["bool"] + NUMS:
        x = rand((3, 4, 5), dtype)
        for axis in (0, 1, 2):
            idx = RNG.integers(0, x.shape[axis], 7).astype("int64")
            check(B.take(ref(x), axis, ref(idx)), np.take(x, idx, axis))
        check(B.take(ref(x), 1, ref(np.zeros(0, "int64"))), np.take(x, [], 1))


@optional
def case_scatter():
    for dtype in ["bool"] + NUMS:
        x = rand((5, 3), dtype)
        index = np.stack([RNG.permutation(5)[:2] for _ in range(3)], axis=1).astype("int64")
        src = rand((2, 3), dtype)
        if dtype in FLOATS:
            src[0, 0] = -0.0
        want = x.copy()
        np.put_along_axis(want, index, src, 0)
        got = B.scatter(ref(x), 0, ref(index), ref(src))
        check(got, want)
        if dtype in FLOATS:  # a written -0.0 keeps its sign
            assert_array_equal(np.signbit(B.to_numpy(got)), np.signbit(want))


@optional
def case_nonzero():
    for dtype in ["bool"] + NUMS:
        x = rand((3, 4), dtype, -1, 2)
        check(B.nonzero(ref(x)), np.argwhere(x))
    check(B.nonzero(ref(np.zeros((2, 0)))), np.argwhere(np.zeros((2, 0))))


def _np_argsort(x, axis, descending):
    """Stable order; descending keeps ties in their original order (not reversed)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


@optional
def case_argsort():
    for dtype in ["bool"] + NUMS:
        x = rand((3, 5, 4), dtype, -2, 2)  # small range: many ties
        for axis in (0, 1, 2):
            for descending in (False, True):
                check(B.argsort(ref(x), axis, descending), _np_argsort(x, axis, descending))
    x = np.array([3.0, NAN, 1.0, 3.0, -INF, INF, 1.0])
    check(B.argsort(ref(x), 0, False), [4, 2, 6, 0, 3, 5, 1])  # NaN last, ties stable
    check(B.argsort(ref(x), 0, True), [1, 5, 0, 3, 2, 6, 4])   # NaN first, ties stable
    check(B.argsort(ref(np.zeros((2, 0))), 1, True), np.zeros((2, 0), "int64"))
    check(B.argsort(ref(np.array([7])), 0, False), [0])


def _np_logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@optional
def case_softmax():
    for dtype in FLOATS:
        x = rand((3, 4), dtype)
        for axis in (0, 1):
            w = x.astype("float64")
            e = np.exp(w - w.max(axis=axis, keepdims=True))
            check(B.softmax(ref(x), axis), e / e.sum(axis=axis, keepdims=True), dtype,
                  rtol=RTOL[dtype] * 4)


@optional
def case_log_softmax():
    for dtype in FLOATS:
        x = rand((3, 4), dtype)
        for axis in (0, 1):
            w = x.astype("float64")
            check(B.log_softmax(ref(x), axis), w - _np_logsumexp(w, axis, True), dtype,
                  rtol=RTOL[dtype] * 4, atol=RTOL[dtype])


@optional
def case_logsumexp():
    for dtype in FLOATS:
        x = rand((2, 3, 4), dtype)
        x[0, 0, :] = -INF
        x[1, 1, :2] = 800.0
        w = x.astype("float64")
        for axes in [None, (2,), (0, 2)]:
            for keepdims in (False, True):
                want = npx(_np_logsumexp, w, axes, keepdims)
                # a result near 0 carries the inputs' absolute rounding error (~5 ulp of 5)
                check(B.logsumexp(ref(x), axes, keepdims), want, dtype, rtol=RTOL[dtype] * 4,
                      atol=RTOL[dtype] * 10)


@optional
def case_unfold2d():
    x = rand((1, 2, 4, 5), "float64")
    got = B.unfold2d(ref(x), (2, 2), (2, 1), ((1, 0), (0, 1)), (1, 2))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 1)))
    want = np.stack([np.stack([xp[:, :, i:i + 4:2, 2 * j:2 * j + 4] for j in range(2)], 2)
                     for i in range(2)], 2)
    check(got, want)


@optional
def case_fold2d():  # the adjoint of unfold2d: <unfold(x), y> == <x, fold(y)>
    x, y = rand((1, 2, 4, 5), "float64"), rand((1, 2, 2, 2, 2, 4), "float64")
    geom = ((2, 2), (2, 1), ((1, 0), (0, 1)), (1, 2))
    cols = B.to_numpy(B.unfold2d(ref(x), *geom))
    back = B.to_numpy(B.fold2d(ref(y), (4, 5), *geom))
    assert np.isclose((cols * y).sum(), (x * back).sum())


@optional
def case_conv2d():
    x, w = rand((2, 2, 4, 4), "float64"), rand((4, 1, 2, 2), "float64")
    got = B.to_numpy(B.conv2d(ref(x), ref(w), (1, 1), ((0, 0), (0, 0)), (1, 1), 2))
    want = np.zeros((2, 4, 3, 3))
    for o in range(4):
        for i in range(3):
            for j in range(3):
                want[:, o, i, j] = (x[:, o // 2, i:i + 2, j:j + 2] * w[o, 0]).sum((1, 2))
    np.testing.assert_allclose(got, want, atol=1e-12)


@optional
def case_conv2d_grad_input():  # adjoint: <conv(x, w), g> == <x, grad_input(g, w)>
    x, w, g = rand((1, 2, 4, 4), "float64"), rand((3, 2, 2, 2), "float64"), rand((1, 3, 2, 3), "float64")
    geom = ((2, 1), ((0, 0), (0, 0)), (1, 1), 1)
    y = B.to_numpy(B.conv2d(ref(x), ref(w), *geom))
    gx = B.to_numpy(B.conv2d_grad_input(ref(g), ref(w), (4, 4), *geom))
    assert np.isclose((y * g).sum(), (x * gx).sum())


@optional
def case_conv2d_grad_weight():
    x, w, g = rand((1, 2, 4, 4), "float64"), rand((3, 2, 2, 2), "float64"), rand((1, 3, 2, 3), "float64")
    geom = ((2, 1), ((0, 0), (0, 0)), (1, 1), 1)
    y = B.to_numpy(B.conv2d(ref(x), ref(w), *geom))
    gw = B.to_numpy(B.conv2d_grad_weight(ref(g), ref(x), (3, 2, 2, 2), *geom))
    assert np.isclose((y * g).sum(), (w * gw).sum())


@optional
def case_max_pool2d():
    x = rand((1, 1, 4, 4), "float64")
    out, idx = B.max_pool2d(ref(x), (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1))
    check(out, x.reshape(1, 1, 2, 2, 2, 2).max((3, 5)))
    flat = x.reshape(-1)
    check(ref(flat[B.to_numpy(idx).reshape(-1)].reshape(1, 1, 2, 2)), B.to_numpy(out))


@optional
def case_layer_norm():
    x, w, b = rand((2, 3), "float64"), rand((3,), "float64"), rand((3,), "float64")
    y, mean, rstd = B.layer_norm(ref(x), ref(w), ref(b), 1, 1e-5)
    m, v = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(B.to_numpy(y), (x - m) / np.sqrt(v + 1e-5) * w + b, atol=1e-12)
    np.testing.assert_allclose(B.to_numpy(rstd), 1 / np.sqrt(v + 1e-5), atol=1e-12)


@optional
def case_gelu():
    x = np.linspace(-5, 5, 11)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(B.to_numpy(B.gelu(ref(x), "none")),
                               0.5 * x * (1 + erf(x / math.sqrt(2))), atol=1e-14)
    c = math.sqrt(2 / math.pi)
    np.testing.assert_allclose(B.to_numpy(B.gelu(ref(x), "tanh")),
                               0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3))), atol=1e-14)


# ---------------------------------------------------------------------- fused backward kernels
# Each against PyTorch's autograd of the forward op (float64), the independent oracle.
def _torch_grads(fn, g, *inputs):
    """Gradients of ``fn(*inputs)`` (a torch function) w.r.t. the float inputs, for ``g``."""
    import torch
    ts = [torch.tensor(a, requires_grad=True) if a is not None and a.dtype.kind == "f"
          else (None if a is None else torch.tensor(a)) for a in inputs]
    out = fn(*ts)
    out.backward(torch.tensor(g))
    return [None if t is None or t.grad is None else t.grad.numpy() for t in ts]


@optional
def case_gelu_backward():
    import torch
    x, g = np.linspace(-5, 5, 11), rand((11,), "float64")
    for mode in ("none", "tanh"):
        want = _torch_grads(lambda t: torch.nn.functional.gelu(t, approximate=mode), g, x)[0]
        check(B.gelu_backward(ref(g), ref(x), mode), want, rtol=1e-12, atol=1e-14)


@optional
def case_silu():
    import torch
    x = np.concatenate([np.linspace(-40, 40, 17), [0.0, -0.0]])
    check(B.silu(ref(x)), torch.nn.functional.silu(torch.tensor(x)).numpy(), rtol=1e-12,
          atol=1e-14)


@optional
def case_silu_backward():
    import torch
    x, g = np.linspace(-8, 8, 11), rand((11,), "float64")
    want = _torch_grads(torch.nn.functional.silu, g, x)[0]
    check(B.silu_backward(ref(g), ref(x)), want, rtol=1e-12, atol=1e-14)


@optional
def case_softmax_backward():
    import torch
    x, g = rand((3, 4), "float64"), rand((3, 4), "float64")
    for axis in (0, 1):
        y = B.softmax(ref(x), axis)
        want = _torch_grads(lambda t: torch.softmax(t, axis), g, x)[0]
        check(B.softmax_backward(ref(g), y, axis), want, rtol=1e-12, atol=1e-14)


@optional
def case_log_softmax_backward():
    import torch
    x, g = rand((3, 4), "float64"), rand((3, 4), "float64")
    for axis in (0, 1):
        y = B.log_softmax(ref(x), axis)
        want = _torch_grads(lambda t: torch.log_softmax(t, axis), g, x)[0]
        check(B.log_softmax_backward(ref(g), y, axis), want, rtol=1e-12, atol=1e-13)


@optional
def case_layer_norm_backward():
    import torch
    x, g = rand((2, 2, 3), "float64"), rand((2, 2, 3), "float64")
    w, b = rand((2, 3), "float64"), rand((2, 3), "float64")
    _, mean, rstd = B.layer_norm(ref(x), ref(w), ref(b), 2, 1e-5)
    want = _torch_grads(lambda *t: torch.nn.functional.layer_norm(t[0], (2, 3), t[1], t[2]),
                        g, x, w, b)
    got = B.layer_norm_backward(ref(g), ref(x), ref(w), mean, rstd, 2, (True, True, True))
    for a, e in zip(got, want):
        check(a, e, rtol=1e-10, atol=1e-12)
    gx, gw, gb = B.layer_norm_backward(ref(g), ref(x), None, mean, rstd, 2, (True, True, False))
    assert gw is None and gb is None  # no weight: no gw even if asked
    want = _torch_grads(lambda t: torch.nn.functional.layer_norm(t, (2, 3)), g, x)[0]
    check(gx, want, rtol=1e-10, atol=1e-12)


@optional
def case_max_pool2d_backward():
    import torch
    x = rand((1, 2, 5, 5), "float64")
    for kernel, stride in [((2, 2), (2, 2)), ((3, 3), (1, 1))]:  # the second overlaps
        out, idx = B.max_pool2d(ref(x), kernel, stride, ((0, 0), (0, 0)), (1, 1))
        g = rand(out.shape, "float64")
        want = _torch_grads(lambda t: torch.nn.functional.max_pool2d(t, kernel, stride), g, x)[0]
        check(B.max_pool2d_backward(ref(g), idx, (1, 2, 5, 5)), want, rtol=1e-12)


@optional
def case_cross_entropy_backward():
    import torch
    x = rand((4, 3, 2), "float64")
    target = np.array([[0, 2], [1, 1], [2, 0], [0, 0]])
    valid = np.array([[True, False], [True, True], [False, True], [True, True]])
    g = np.array(0.75)
    masked = np.where(valid, target, -100)
    want = _torch_grads(lambda t, y: torch.nn.functional.cross_entropy(t, y), g, x, masked)[0]
    got = B.cross_entropy_backward(ref(g), ref(x), ref(np.where(valid, target, 0)), ref(valid),
                                   1.0 / valid.sum())
    check(got, want, rtol=1e-12, atol=1e-15)
    want = _torch_grads(lambda t, y: torch.nn.functional.cross_entropy(t, y, reduction="sum"),
                        np.array(1.0), x, target)[0]
    check(B.cross_entropy_backward(ref(np.array(1.0)), ref(x), ref(target), None, 1.0), want,
          rtol=1e-12, atol=1e-15)


def _sdpa_inputs():
    q, k, v = rand((2, 3, 4), "float64"), rand((2, 5, 4), "float64"), rand((2, 5, 2), "float64")
    keep = RNG.random((2, 3, 5)) < 0.6
    keep[:, :, 0] = True
    keep[1, 2] = False  # a query that may attend to nothing
    return q, k, v, keep


@optional
def case_scaled_dot_product_attention():
    import torch
    q, k, v, keep = _sdpa_inputs()
    mask = np.where(keep, 0.0, -INF)
    out, attn = B.scaled_dot_product_attention(ref(q), ref(k), ref(v), ref(mask), 0.5)
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q), torch.tensor(k), torch.tensor(v), attn_mask=torch.tensor(keep),
        scale=0.5).numpy()
    check(out, want, rtol=1e-12, atol=1e-14)
    assert (B.to_numpy(attn)[1, 2] == 0).all() and (B.to_numpy(out)[1, 2] == 0).all()
    s = q @ k.transpose(0, 2, 1) * 0.5
    e = np.exp(s - s.max(-1, keepdims=True))
    out, attn = B.scaled_dot_product_attention(ref(q), ref(k), ref(v), None, 0.5)
    check(attn, e / e.sum(-1, keepdims=True), rtol=1e-12)


@optional
def case_scaled_dot_product_attention_backward():
    import torch
    q, k, v, keep = _sdpa_inputs()
    mask = np.where(keep, 0.0, -INF)
    out, attn = B.scaled_dot_product_attention(ref(q), ref(k), ref(v), ref(mask), 0.5)
    g = rand(out.shape, "float64")
    want = _torch_grads(lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(
        a, b, c, attn_mask=torch.tensor(keep), scale=0.5), g, q, k, v)
    got = B.scaled_dot_product_attention_backward(ref(g), ref(q), ref(k), ref(v), attn, 0.5)
    for a, e in zip(got, want):
        check(a, e, rtol=1e-10, atol=1e-13)
    k1, v1 = k[:1], v[:1]  # keys and values broadcast over the batch: their grads are summed
    out, attn = B.scaled_dot_product_attention(ref(q), ref(k1), ref(v1), None, 1.0)
    want = _torch_grads(lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(
        a, b, c, scale=1.0), g, q, k1, v1)
    got = B.scaled_dot_product_attention_backward(ref(g), ref(q), ref(k1), ref(v1), attn, 1.0)
    for a, e in zip(got, want):
        check(a, e, rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------------- math kernels
def _torch64(name):
    torch = pytest.importorskip("torch")
    return lambda x: getattr(torch, name)(torch.tensor(np.asarray(x, np.float64))).numpy()


def _math_unary_case(name, oracle, lo=-5, hi=5, atol=None):
    for dtype in FLOATS:
        x = np.concatenate([rand((30,), dtype, lo, hi), np.array(EDGES, dtype)])
        check(getattr(B, name)(ref(x)), npx(oracle, x.astype(np.float64)), dtype=dtype,
              rtol=RTOL[dtype] * 8, atol=(atol or {}).get(dtype, 0.0))
        z = getattr(B, name)(ref(np.array([0.0, -0.0], dtype)))  # odd functions keep -0.0
        if name in ("asin", "atan", "sinh", "asinh", "atanh", "erfinv"):
            assert np.signbit(B.to_numpy(z)).tolist() == [False, True], name


@optional
def case_asin():
    _math_unary_case("asin", np.arcsin, -1, 1)


@optional
def case_acos():
    _math_unary_case("acos", np.arccos, -1, 1)


@optional
def case_atan():
    _math_unary_case("atan", np.arctan)


@optional
def case_sinh():
    _math_unary_case("sinh", np.sinh)


@optional
def case_cosh():
    _math_unary_case("cosh", np.cosh)


@optional
def case_asinh():
    _math_unary_case("asinh", np.arcsinh)


@optional
def case_acosh():
    _math_unary_case("acosh", np.arccosh, 0.5, 5)


@optional
def case_atanh():
    _math_unary_case("atanh", np.arctanh, -1, 1)


@optional
def case_erfc():
    _math_unary_case("erfc", _torch64("erfc"))


@optional
def case_erfinv():
    _math_unary_case("erfinv", _torch64("erfinv"), -1, 1)


@optional
def case_lgamma():
    _math_unary_case("lgamma", _torch64("lgamma"), atol={"float32": 1e-5, "float64": 1e-13})


@optional
def case_digamma():  # (near its zeros only absolute accuracy is meaningful)
    _math_unary_case("digamma", _torch64("digamma"), atol={"float32": 1e-5, "float64": 1e-13})


def _math_binary_case(name, oracle):
    for dtype in FLOATS:
        a, b = edge_pairs(dtype)
        check(getattr(B, name)(ref(a), ref(b)), npx(oracle, a, b), rtol=RTOL[dtype] * 4)
        x, y = rand((3, 1), dtype), rand((4,), dtype)
        check(getattr(B, name)(ref(x), ref(y)), npx(oracle, x, y), rtol=RTOL[dtype] * 4)
        check(getattr(B, name)(ref(x), 1.5), npx(oracle, x, np.array(1.5, dtype)),
              rtol=RTOL[dtype] * 4)


@optional
def case_atan2():
    _math_binary_case("atan2", np.arctan2)


@optional
def case_hypot():
    _math_binary_case("hypot", np.hypot)


@optional
def case_copysign():
    _math_binary_case("copysign", np.copysign)


_BIT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


def _bit_edges(dtype):
    info = np.iinfo(dtype)
    vals = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 85]
    return np.array(vals + ([-1, -86] if info.min < 0 else []), dtype)


def _bitwise_case(name, fn):
    for dtype in _BIT_DTYPES:
        e = _bit_edges(dtype)
        a, b = np.repeat(e, len(e)), np.tile(e, len(e))
        check(getattr(B, name)(ref(a), ref(b)), fn(a, b))
        check(getattr(B, name)(ref(a), 3), fn(a, np.array(3, dtype)))
        check(getattr(B, name)(5, ref(b)), fn(np.array(5, dtype), b))
    p, q = rand((3, 1), "bool"), rand((4,), "bool")
    check(getattr(B, name)(ref(p), ref(q)), fn(p, q))


@optional
def case_bitwise_and():
    _bitwise_case("bitwise_and", np.bitwise_and)


@optional
def case_bitwise_or():
    _bitwise_case("bitwise_or", np.bitwise_or)


@optional
def case_bitwise_xor():
    _bitwise_case("bitwise_xor", np.bitwise_xor)


@optional
def case_bitwise_not():
    for dtype in _BIT_DTYPES:
        e = _bit_edges(dtype)
        check(B.bitwise_not(ref(e)), np.invert(e))


def _shift_case(name, op):
    torch = pytest.importorskip("torch")
    for dtype in _BIT_DTYPES:
        bits = np.iinfo(dtype).bits
        shifts = np.array([s for s in range(-3, 2 * bits + 2)
                           if np.iinfo(dtype).min <= s <= np.iinfo(dtype).max], dtype)
        e = _bit_edges(dtype)
        a, s = np.repeat(e, len(shifts)), np.tile(shifts, len(e))
        want = op(torch.from_numpy(a), torch.from_numpy(s)).numpy()
        check(getattr(B, name)(ref(a), ref(s)), want)
        check(getattr(B, name)(ref(e), 2), op(torch.from_numpy(e), 2).numpy())


@optional
def case_left_shift():
    _shift_case("left_shift", lambda a, s: a << s)


@optional
def case_right_shift():
    _shift_case("right_shift", lambda a, s: a >> s)


# ====================================================================== the contract's composites
class CompositeBackend(ReferenceBackend):
    """The reference's primitives with every optional kernel left to the contract's composite,
    i.e. what a new backend gets before it overrides anything."""


for _name in optional_kernels():
    setattr(CompositeBackend, _name, getattr(Backend, _name))

C = CompositeBackend()


@pytest.mark.parametrize("name", WITH_COMPOSITE)
def test_optional_kernel_composite(name, monkeypatch):
    """Every ``case_<kernel>`` above again, on the composite instead of the reference's own
    kernel (the required primitives, and so ``ref``/``check``, are the same)."""
    monkeypatch.setitem(globals(), "B", C)
    OPTIONAL[name]()


def test_composites_agree_on_ordinary_inputs():
    for dtype in FLOATS:
        x = rand((3, 4), dtype, 0.1, 3)
        for name in ["log1p", "expm1"]:
            check(getattr(Backend, name)(B, ref(x)), B.to_numpy(getattr(B, name)(ref(x))),
                  rtol=RTOL[dtype] * 4)
        check(Backend.remainder(B, ref(x), 0.7), B.to_numpy(B.remainder(ref(x), 0.7)),
              rtol=RTOL[dtype] * 8)
    for dtype in ["bool"] + NUMS:
        x = rand((3, 4), dtype)
        check(Backend.min(B, ref(x), (1,), False), np.min(x, axis=1))
        check(Backend.argmin(B, ref(x), 0, True), np.argmin(x, axis=0, keepdims=True))


@pytest.mark.parametrize("dtype", INTS)
def test_composite_min_argmin_int_extremes(dtype):
    """``-max(-x)`` would wrap for the most negative int; the composite uses ``~x``."""
    info = np.iinfo(dtype)
    x = np.array([[0, info.min, info.max, -1], [info.max, info.max, info.min, info.min]], dtype)
    for axes in [None, (0,), (1,)]:
        check(Backend.min(B, ref(x), axes, False), np.min(x, axis=axes))
    for axis in [None, 0, 1]:
        check(Backend.argmin(B, ref(x), axis, True), np.argmin(x, axis=axis, keepdims=True))


def test_composite_log1p_expm1_infinities():
    check(Backend.log1p(B, ref(np.array([INF, -INF, -1.0, 1e308, NAN]))),
          npx(np.log1p, np.array([INF, -INF, -1.0, 1e308, NAN])))
    x = np.array([-INF, INF, -1e30, -800.0, 709.0, NAN])
    check(Backend.expm1(B, ref(x)), npx(np.expm1, x))
    f = np.array([-INF, -104.0, 88.0, 89.0], "float32")  # exp(-104) is subnormal in float32
    check(Backend.expm1(B, ref(f)), npx(np.expm1, f))


@pytest.mark.parametrize("dtype", FLOATS)
def test_composite_remainder_inf(dtype):
    a = np.array([5.0, -5.0, 0.0, -0.0, INF, -INF, NAN], dtype)
    for b in [INF, -INF]:
        bb = np.array(b, dtype)
        check(Backend.remainder(B, ref(a), b), npx(np.remainder, a, bb))
        check(Backend.remainder(B, ref(a), ref(np.full(a.shape, b, dtype))),
              npx(np.remainder, a, bb))
        check(Backend.remainder(B, 5.0, ref(np.array([b, 2.0], dtype))),
              npx(np.remainder, np.array(5.0, dtype), np.array([b, 2.0], dtype)))
        check(Backend.remainder(B, -5.0, ref(np.array([b, 2.0], dtype))),
              npx(np.remainder, np.array(-5.0, dtype), np.array([b, 2.0], dtype)))


def test_composite_logical_or_scalar():
    a = rand((3,), "bool")
    for s in [False, True]:
        check(Backend.logical_or(B, ref(a), s), a | s)
        check(Backend.logical_or(B, s, ref(a)), a | s)


def test_composite_scatter_keeps_negative_zero():
    x = np.array([1.0, 2.0, 3.0])
    got = B.to_numpy(Backend.scatter(B, ref(x), 0, ref(np.array([2, 0])),
                                     ref(np.array([-0.0, 0.0]))))
    assert_array_equal(np.signbit(got), [False, False, True])
    assert_array_equal(got, [0.0, 2.0, 0.0])


def test_float16_arithmetic():
    a, b = rand((3, 4), "float16"), rand((4,), "float16")
    check(B.add(ref(a), ref(b)), a + b)
    check(B.mul(ref(a), 300.0), npx(np.multiply, a, np.float16(300.0)))  # overflows to inf
    check(B.exp(ref(a)), np.exp(a))
    check(B.sum(ref(a), (0,), False), a.astype("float64").sum(axis=0), "float16")


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
def test_small_integers_wrap_like_numpy(dtype):
    """uint8/int8/int16 store modulo 2**bits, as NumPy does, in every primitive."""
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
    y = np.array([1, 1, info.max, info.max, 2], dtype=dtype)
    for op, fn in ((B.add, np.add), (B.sub, np.subtract), (B.mul, np.multiply)):
        check(op(ref(x), ref(y)), fn(x, y))
    check(B.neg(ref(x)), np.negative(x))
    check(B.pow(ref(x), 3), x ** np.array(3, dtype))
    check(B.sum(ref(x), None, False), np.add.reduce(x, dtype=dtype))
    check(B.cumsum(ref(x), 0), np.cumsum(x, dtype=dtype))
    check(B.astype(ref(np.array([300, -129, 70000], "int64")), dtype),
          np.array([300, -129, 70000], "int64").astype(dtype))
    check(B.astype(ref(np.array([2.7, -0.9, 100.5])), dtype),
          np.array([2.7, -0.9, 100.5]).astype(dtype))
