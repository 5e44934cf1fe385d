"""Dtypes and PyTorch's type promotion (tables derived once from PyTorch 2.x, hard-coded)."""
import operator
import pickle

import numpy as np
import pytest

import plugrad
from plugrad.core import dtypes as D

ABBREV = {"b": "bool", "u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32",
          "i64": "int64", "f16": "float16", "bf16": "bfloat16", "f32": "float32",
          "f64": "float64"}
COLUMNS = "b u8 i8 i16 i32 i64 f16 bf16 f32 f64".split()
# promote_types(row, column)
PROMOTE = {
    'b': 'b u8 i8 i16 i32 i64 f16 bf16 f32 f64',
    'u8': 'u8 u8 i16 i16 i32 i64 f16 bf16 f32 f64',
    'i8': 'i8 i16 i8 i16 i32 i64 f16 bf16 f32 f64',
    'i16': 'i16 i16 i16 i16 i32 i64 f16 bf16 f32 f64',
    'i32': 'i32 i32 i32 i32 i32 i64 f16 bf16 f32 f64',
    'i64': 'i64 i64 i64 i64 i64 i64 f16 bf16 f32 f64',
    'f16': 'f16 f16 f16 f16 f16 f16 f16 f32 f32 f64',
    'bf16': 'bf16 bf16 bf16 bf16 bf16 bf16 f32 bf16 f32 f64',
    'f32': 'f32 f32 f32 f32 f32 f32 f32 f32 f32 f64',
    'f64': 'f64 f64 f64 f64 f64 f64 f64 f64 f64 f64',
}
# result_type(dimensioned tensor of the row dtype, 0-d tensor of the column dtype)
WITH_ZERO_DIM = {
    'b': 'b u8 i8 i16 i32 i64 f16 bf16 f32 f64',
    'u8': 'u8 u8 u8 u8 u8 u8 f16 bf16 f32 f64',
    'i8': 'i8 i8 i8 i8 i8 i8 f16 bf16 f32 f64',
    'i16': 'i16 i16 i16 i16 i16 i16 f16 bf16 f32 f64',
    'i32': 'i32 i32 i32 i32 i32 i32 f16 bf16 f32 f64',
    'i64': 'i64 i64 i64 i64 i64 i64 f16 bf16 f32 f64',
    'f16': 'f16 f16 f16 f16 f16 f16 f16 f16 f16 f16',
    'bf16': 'bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16',
    'f32': 'f32 f32 f32 f32 f32 f32 f32 f32 f32 f32',
    'f64': 'f64 f64 f64 f64 f64 f64 f64 f64 f64 f64',
}
# result_type(tensor of the row dtype, Python scalar True / 2 / 2.5)
SCALARS = (True, 2, 2.5)
WITH_SCALAR = {
    'b': 'b i64 f32', 'u8': 'u8 u8 f32', 'i8': 'i8 i8 f32', 'i16': 'i16 i16 f32',
    'i32': 'i32 i32 f32', 'i64': 'i64 i64 f32', 'f16': 'f16 f16 f16', 'bf16': 'bf16 bf16 bf16',
    'f32': 'f32 f32 f32', 'f64': 'f64 f64 f64',
}


def _table(table, columns):
    return [(ABBREV[row], col, ABBREV[res]) for row, line in table.items()
            for col, res in zip(columns, line.split())]


def _dt(name):
    return D.get_dtype(ABBREV.get(name, name))


@pytest.mark.parametrize("a, b, expected", _table(PROMOTE, COLUMNS))
def test_promote_types_table(a, b, expected):
    assert plugrad.promote_types(_dt(a), _dt(b)) is _dt(expected)


@pytest.mark.parametrize("a, b, expected", _table(WITH_ZERO_DIM, COLUMNS))
def test_zero_dim_operands_rank_lower(a, b, expected):
    assert D.result_type_of(((_dt(a), False), (_dt(b), True))) is _dt(expected)
    assert D.result_type_of(((_dt(b), True), (_dt(a), False))) is _dt(expected)


@pytest.mark.parametrize("a, scalar, expected", _table(WITH_SCALAR, SCALARS))
def test_python_scalars_rank_lowest(a, scalar, expected):
    assert D.result_with_scalar(_dt(a), scalar) is _dt(expected)


def _supported(device):
    names = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
    k = plugrad.core.registry.get_registry().table(device)
    return [n for n in names if n in k.dtypes]


@pytest.mark.parametrize("op", [operator.add, operator.mul])
def test_ops_follow_the_tables(device, op):
    """Every supported dtype pair through real ops: dimensioned, 0-d and scalar operands."""
    names = _supported(device)
    short = {v: k for k, v in ABBREV.items()}
    for a in names:
        x = plugrad.ones(2, dtype=a, device=device)
        for b in names:
            col = COLUMNS.index(short[b])
            y = plugrad.ones(2, dtype=b, device=device)
            z = plugrad.ones((), dtype=b, device=device)
            assert op(x, y).dtype is _dt(PROMOTE[short[a]].split()[col]), (a, b)
            assert op(x, z).dtype is _dt(WITH_ZERO_DIM[short[a]].split()[col]), (a, b)
            assert op(z, x).dtype is _dt(WITH_ZERO_DIM[short[a]].split()[col]), (a, b)
        for s, expected in zip(SCALARS, WITH_SCALAR[short[a]].split()):
            assert op(x, s).dtype is _dt(expected), (a, s)
            assert op(s, x).dtype is _dt(expected), (a, s)


def test_named_promotion_rules(device):
    f32 = plugrad.ones(3, device=device)
    i64 = plugrad.arange(3, device=device)
    assert (f32 * 2.5).dtype is plugrad.float32          # a Python float does not up-cast
    assert (f32 + 1).dtype is plugrad.float32
    assert (i64 * 2.5).dtype is plugrad.float32          # int tensor + float scalar: default
    assert (i64 / i64).dtype is plugrad.float32          # true division of ints
    assert (i64 / 2).dtype is plugrad.float32
    assert (plugrad.tensor([True], device=device) + 1).dtype is plugrad.int64
    f64_0d = plugrad.tensor(2., dtype=plugrad.float64, device=device)
    assert (f32 + f64_0d).dtype is plugrad.float32      # 0-d ranks below dimensioned
    f64 = plugrad.ones(3, dtype=plugrad.float64, device=device)
    assert (f32 + f64).dtype is plugrad.float64
    assert (plugrad.tensor(1., device=device) + plugrad.tensor(1, device=device)).dtype \
        is plugrad.float32
    i32 = plugrad.ones(3, dtype=plugrad.int32, device=device)
    assert (i32 + plugrad.tensor(5, device=device)).dtype is plugrad.int32
    assert (i32 + 5).tolist() == [6, 6, 6]


def test_default_dtype(device):
    assert plugrad.get_default_dtype() is plugrad.float32
    plugrad.set_default_dtype(plugrad.float64)
    try:
        assert plugrad.get_default_dtype() is plugrad.float64
        assert plugrad.tensor([1.5], device=device).dtype is plugrad.float64
        assert plugrad.zeros(1, device=device).dtype is plugrad.float64
        assert plugrad.arange(2., device=device).dtype is plugrad.float64
        assert plugrad.rand(2, device=device).dtype is plugrad.float64
        i64 = plugrad.arange(3, device=device)
        assert (i64 * 2.5).dtype is plugrad.float64
        assert (i64 / i64).dtype is plugrad.float64
        assert (plugrad.ones(1, dtype=plugrad.float32, device=device) * 2.5).dtype \
            is plugrad.float32
    finally:
        plugrad.set_default_dtype(plugrad.float32)
    assert (plugrad.arange(3, device=device) * 2.5).dtype is plugrad.float32


def test_set_default_dtype_refuses_integers():
    with pytest.raises(TypeError, match="set_default_dtype: only floating dtypes are allowed, "
                                        "got plugrad.int64"):
        plugrad.set_default_dtype(plugrad.int64)
    assert plugrad.get_default_dtype() is plugrad.float32


@pytest.mark.parametrize("spec, expected", [
    (plugrad.float16, plugrad.float16), ("float64", plugrad.float64),
    ("plugrad.int32", plugrad.int32), ("torch.int32", plugrad.int32), ("long", plugrad.int64),
    ("half", plugrad.float16), ("double", plugrad.float64), (float, plugrad.float32),
    (int, plugrad.int64), (bool, plugrad.bool), (np.float32, plugrad.float32),
    (np.dtype("int16"), plugrad.int16), ("bool", plugrad.bool),
])
def test_get_dtype_spellings(spec, expected):
    assert D.get_dtype(spec) is expected


def test_unknown_dtype_is_refused():
    with pytest.raises(TypeError, match="unknown dtype 'complex64'; expected one of bool"):
        D.get_dtype("complex64")
    with pytest.raises(TypeError, match="unknown dtype <class 'str'>"):
        D.get_dtype(str)


def test_dtype_objects():
    assert repr(plugrad.float32) == "plugrad.float32"
    assert plugrad.float is plugrad.float32 and plugrad.double is plugrad.float64
    assert plugrad.long is plugrad.int64 and plugrad.half is plugrad.float16
    assert plugrad.int is plugrad.int32 and plugrad.bool.name == "bool"
    assert plugrad.float16.itemsize == 2 and plugrad.float64.itemsize == 8
    assert plugrad.float32.is_floating_point and not plugrad.int64.is_floating_point
    assert plugrad.int8.is_signed and not plugrad.uint8.is_signed
    assert pickle.loads(pickle.dumps(plugrad.float16)) is plugrad.float16
    assert plugrad.float64.to_numpy() == np.float64
    assert plugrad.bfloat16.to_numpy().name == "bfloat16"  # ml-dtypes' NumPy type


def test_tensor_dtype_conversions(device):
    t = plugrad.tensor([1.7, -2.2], device=device)
    assert t.double().dtype is plugrad.float64
    assert t.half().dtype is plugrad.float16
    assert t.long().tolist() == [1, -2] and t.int().dtype is plugrad.int32
    assert t.bool().tolist() == [True, True]
    assert t.to(plugrad.float64).dtype is plugrad.float64
    assert t.to("int64").tolist() == [1, -2]
    assert t.type() == "plugrad.FloatTensor" and t.type(plugrad.int64).dtype is plugrad.int64


def test_sub_refuses_any_bool_operand():
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        plugrad.ones(2) - plugrad.tensor([True, False])


@pytest.mark.parametrize("a, b", [(1.0, 2.0), (1, 2), (1, 0.5), (True, False), (True, 2),
                                  (False, 2.5)])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_where_of_two_scalars_takes_torchs_dtype(device, a, b, default):
    """Both branches Python scalars: PyTorch's dtype (a float gives the default float dtype),
    as the backend guide says; the backend sees one 0-d array of it (never two scalars)."""
    torch = pytest.importorskip("torch")
    cond = [True, False, True]
    torch.set_default_dtype(getattr(torch, default))
    plugrad.set_default_dtype(getattr(plugrad, default))
    try:
        want = torch.where(torch.tensor(cond), a, b)
        got = plugrad.where(plugrad.tensor(cond, device=device), a, b)
    finally:
        torch.set_default_dtype(torch.float32)
        plugrad.set_default_dtype(plugrad.float32)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    assert got.tolist() == want.tolist()
