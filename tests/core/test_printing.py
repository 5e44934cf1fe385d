"""Tensor ``repr`` must match PyTorch's character for character (users compare with tutorials)."""
import math

import numpy as np
import pytest

import plugrad
from plugrad.core import printing

NAN, INF = math.nan, math.inf

# (data, dtype name or None) -> repr of plugrad.tensor(data, dtype=...) on cpu, as torch prints it
HARD_CODED = [
    ([1., 2., 3.], None, "tensor([1., 2., 3.])"),
    (10., None, "tensor(10.)"),
    (6., None, "tensor(6.)"),
    (3, None, "tensor(3)"),
    ([1, 2, 3], None, "tensor([1, 2, 3])"),
    ([True, False], None, "tensor([ True, False])"),
    ([[1, 2], [3, 40]], None, "tensor([[ 1,  2],\n        [ 3, 40]])"),
    ([[1.5, -2.25], [300., 4.]], None,
     "tensor([[  1.5000,  -2.2500],\n        [300.0000,   4.0000]])"),
    ([1e-5, 1., 1000.], None, "tensor([1.0000e-05, 1.0000e+00, 1.0000e+03])"),
    ([1e8, 1.], None, "tensor([1.0000e+08, 1.0000e+00])"),
    ([1., 1000.], None, "tensor([   1., 1000.])"),
    ([NAN, 1.], None, "tensor([nan, 1.])"),
    ([NAN, -INF], None, "tensor([nan, -inf])"),
    ([-0., 1.], None, "tensor([-0., 1.])"),
    ([0.1, 0.2], None, "tensor([0.1000, 0.2000])"),
    ([1., 2.], "float64", "tensor([1., 2.], dtype=plugrad.float64)"),
    ([1, 2], "int32", "tensor([1, 2], dtype=plugrad.int32)"),
    ([0.5, 0.25], "float16", "tensor([0.5000, 0.2500], dtype=plugrad.float16)"),
    ([], None, "tensor([])"),
    ([], "int64", "tensor([], dtype=plugrad.int64)"),
    ([], "bool", "tensor([], dtype=plugrad.bool)"),
    ([[1., 2.], [3., 4.]], None, "tensor([[1., 2.],\n        [3., 4.]])"),
    ([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], None,
     "tensor([[[1, 2],\n         [3, 4]],\n\n        [[5, 6],\n         [7, 8]]])"),
]


@pytest.mark.parametrize("data, dtype, expected", HARD_CODED)
def test_repr_hard_coded(data, dtype, expected):
    assert repr(plugrad.tensor(data, dtype=dtype)) == expected


def test_str_equals_repr():
    t = plugrad.tensor([1., 2.])
    assert str(t) == repr(t) == "tensor([1., 2.])"


def test_requires_grad_and_grad_fn_suffixes(device):
    x = plugrad.tensor(1.8001, requires_grad=True)
    assert repr(x) == "tensor(1.8001, requires_grad=True)"
    assert repr(x * 2) == "tensor(3.6002, grad_fn=<MulBackward0>)"
    y = plugrad.tensor([1., 2., 3.], device=device, requires_grad=True)
    suffix = "" if device == "cpu" else f", device='{device}'"
    assert repr(y.sum()) == f"tensor(6.{suffix}, grad_fn=<SumBackward0>)"
    with plugrad.no_grad():
        assert repr(y * 2) == f"tensor([2., 4., 6.]{suffix})"


def test_non_cpu_device_suffix(device):
    t = plugrad.tensor([1., 2.], dtype=plugrad.float64, device=device)
    suffix = "" if device == "cpu" else f", device='{device}'"
    assert repr(t) == f"tensor([1., 2.]{suffix}, dtype=plugrad.float64)"


def test_empty_shapes_show_size(device):
    t = plugrad.zeros(0, 3, device=device)
    suffix = "" if device == "cpu" else f", device='{device}'"
    assert repr(t) == f"tensor([]{suffix}, size=(0, 3))"


def test_large_tensor_is_summarised(device):
    t = plugrad.arange(2000, device=device)
    suffix = "" if device == "cpu" else f", device='{device}'"
    assert repr(t) == f"tensor([   0,    1,    2,  ..., 1997, 1998, 1999]{suffix})"


def test_summarised_2d():
    t = plugrad.arange(1600).reshape(40, 40)
    assert repr(t) == (
        "tensor([[   0,    1,    2,  ...,   37,   38,   39],\n"
        "        [  40,   41,   42,  ...,   77,   78,   79],\n"
        "        [  80,   81,   82,  ...,  117,  118,  119],\n"
        "        ...,\n"
        "        [1480, 1481, 1482,  ..., 1517, 1518, 1519],\n"
        "        [1520, 1521, 1522,  ..., 1557, 1558, 1559],\n"
        "        [1560, 1561, 1562,  ..., 1597, 1598, 1599]])")


def test_long_rows_wrap_at_linewidth():
    t = plugrad.tensor([x * 1.1 for x in range(12)])
    assert repr(t) == ("tensor([ 0.0000,  1.1000,  2.2000,  3.3000,  4.4000,  5.5000,  6.6000,"
                       "  7.7000,\n         8.8000,  9.9000, 11.0000, 12.1000])")


def test_suffix_moves_to_new_line_past_linewidth():
    t = plugrad.tensor([x + 0.5 for x in range(8)], dtype=plugrad.float64, requires_grad=True)
    assert repr(t) == ("tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000],\n"
                       "       dtype=plugrad.float64, requires_grad=True)")


def test_printoptions():
    t = plugrad.tensor([1.12345, 2.5])
    with printing.printoptions(precision=2):
        assert repr(t) == "tensor([1.12, 2.50])"
    with printing.printoptions(sci_mode=True):
        assert repr(t) == "tensor([1.1235e+00, 2.5000e+00])"
    with printing.printoptions(threshold=5):
        assert repr(plugrad.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    assert repr(t) == "tensor([1.1235, 2.5000])"
    plugrad.set_printoptions(precision=1)
    try:
        assert repr(t) == "tensor([1.1, 2.5])"
    finally:
        plugrad.set_printoptions(profile="default")
    assert repr(t) == "tensor([1.1235, 2.5000])"


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="set_printoptions: unknown profile 'tiny'"):
        plugrad.set_printoptions(profile="tiny")


def test_default_dtype_changes_the_suffix():
    plugrad.set_default_dtype(plugrad.float64)
    try:
        assert repr(plugrad.tensor([1.5])) == "tensor([1.5000])"
        assert repr(plugrad.tensor([1.5], dtype=plugrad.float32)) == \
            "tensor([1.5000], dtype=plugrad.float32)"
    finally:
        plugrad.set_default_dtype(plugrad.float32)


# ---------------------------------------------------------------- compared with torch itself
TORCH_CASES = [
    ("[1.,2.,3.]", None), ("10.", None), ("[1e-5,1.,1000.]", None), ("[1e10, 1.]", None),
    ("[[1.5,-2.25],[300.,4.]]", None), ("[1,2,3]", None), ("[True,False]", None),
    ("[[True],[False]]", None), ("[-1,100000]", None), ("[nan,1.]", None), ("[inf,-1.5]", None),
    ("[nan]", None), ("[1e-10,1e-12]", None), ("[123456789.,1.]", None), ("[0.,0.]", None),
    ("[-0.,1.]", None), ("[1e8, 1.]", None), ("[1e9, 1.]", None), ("[0.001, 1.]", None),
    ("[0.0001,1.]", None), ("[0.00001, 1.]", None), ("[1.,1001.5]", None), ("1e-5", None),
    ("-3.", None), ("[1.,2.]", "float64"), ("[1,2]", "int32"), ("[1.,2.]", "float16"),
    ("[[1,2],[3,4]]", "float64"), ("[]", None), ("[]", "int64"), ("[]", "float64"),
    ("[]", "int32"), ("True", None), ("[1.23456789]", None), ("[1e20]", None), ("[1.5e-7]", None),
    ("[[[1.,2.],[3.,4.]],[[5.,6.],[7.,8.]]]", None), ("list(range(30))", None),
    ("[x*1.1 for x in range(40)]", None), ("[x*1e5 for x in range(20)]", None),
    ("[[x*1.1 for x in range(20)] for _ in range(3)]", None), ("[1,2]", "bool"),
    ("[1,2]", "uint8"), ("[-5,2]", "int8"), ("[5,2]", "int16"), ("[0.5, 0.25]", "float16"),
    ("[[1.,nan],[-inf,4.25]]", None), ("[1e-4, 1e-3]", None), ("[1e4,1e-4]", None),
    ("[12345.6789]", None), ("[-1e-5]", None), ("[nan, -inf]", None),
    ("[[x + 0.5 for x in range(8)]]", "float64"), ("[65504., 1.]", "float16"),
]
SHAPES = [(2000,), (40, 40), (5, 300), (3, 4, 100), (1001,), (10, 10, 11), (7, 7, 7, 7)]


def _both(expr, dtype):
    torch = pytest.importorskip("torch")
    data = eval(expr, {"nan": NAN, "inf": INF})
    ours = plugrad.tensor(data, dtype=dtype)
    theirs = torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None)
    return ours, theirs


@pytest.mark.parametrize("expr, dtype", TORCH_CASES)
def test_repr_matches_torch(expr, dtype):
    ours, theirs = _both(expr, dtype)
    assert repr(ours) == repr(theirs).replace("torch.", "plugrad.")


@pytest.mark.parametrize("expr, dtype", [("[2.,3.]", None), ("[x + 0.5 for x in range(8)]",
                                                            "float64"), ("1.8001", None)])
def test_repr_with_grad_matches_torch(expr, dtype):
    ours, theirs = _both(expr, dtype)
    ours.requires_grad_(), theirs.requires_grad_()
    for a, b in [(ours, theirs), (ours * 2, theirs * 2), (ours.sum(), theirs.sum())]:
        assert repr(a) == repr(b).replace("torch.", "plugrad.")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["float", "int", "bool"])
def test_large_repr_matches_torch(shape, kind):
    torch = pytest.importorskip("torch")
    v = np.arange(int(np.prod(shape))).reshape(shape)
    v = {"float": v * np.float32(0.37), "int": v, "bool": v % 3 == 0}[kind]
    assert repr(plugrad.from_numpy(v)) == repr(torch.from_numpy(v)).replace("torch.", "plugrad.")


@pytest.mark.parametrize("options", [dict(precision=2), dict(sci_mode=True),
                                     dict(sci_mode=False), dict(linewidth=40),
                                     dict(threshold=10, edgeitems=2), dict(profile="short")])
def test_printoptions_match_torch(options):
    torch = pytest.importorskip("torch")
    data = [[x * 1.37 - 20 for x in range(15)] for _ in range(4)]
    old = torch._tensor_str.get_printoptions()
    torch.set_printoptions(**options)
    try:
        expected = repr(torch.tensor(data)).replace("torch.", "plugrad.")
    finally:
        torch.set_printoptions(**old)
    with printing.printoptions(**options):
        assert repr(plugrad.tensor(data)) == expected
