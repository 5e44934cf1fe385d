"""Matrix products against NumPy: PyTorch's matmul rules, einsum, errors, gradients."""
import numpy as np
import pytest
from numpy.testing import assert_allclose

import plugrad
from plugrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def R(*shape):
    return RNG.standard_normal(shape)


def T(a, device, requires_grad=False, dtype=None):
    return plugrad.tensor(np.asarray(a), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def check(got, want, dtype=None):
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape, (tuple(got.shape), want.shape)
    if dtype is not None:
        assert got.dtype is dtype
    assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 3)), ((3, 4), (4, 5)),
          ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
          ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((0, 4), (4, 2)), ((3, 0), (0, 2)),
          ((1, 3, 4), (2, 4, 1))]


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul_matches_numpy(device, sa, sb):
    a, b = R(*sa), R(*sb)
    check(plugrad.matmul(T(a, device), T(b, device)), np.matmul(a, b), plugrad.float64)
    check(T(a, device) @ T(b, device), a @ b)


def test_named_products(device):
    a, b, v, w = R(3, 4), R(4, 2), R(4), R(4)
    check(plugrad.mm(T(a, device), T(b, device)), a @ b)
    ba, bb = R(2, 3, 4), R(2, 4, 5)
    check(plugrad.bmm(T(ba, device), T(bb, device)), ba @ bb)
    check(plugrad.mv(T(a, device), T(v, device)), a @ v)
    check(plugrad.dot(T(v, device), T(w, device)), v @ w)
    check(plugrad.outer(T(v, device), T(b[0], device)), np.outer(v, b[0]))
    c = R(3, 2)
    check(plugrad.addmm(T(c, device), T(a, device), T(b, device), beta=0.5, alpha=2.0),
          0.5 * c + 2.0 * (a @ b))
    check(plugrad.baddbmm(T(R(2, 3, 5), device) * 0.0, T(ba, device), T(bb, device)), ba @ bb)
    check(T(v, device).dot(T(w, device)), v @ w)


def test_integer_matmul(device):
    a, b = np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)
    check(T(a, device) @ T(b, device), a @ b, plugrad.int64)


@pytest.mark.parametrize("op,sa,sb,msg", [
    ("matmul", (3, 4), (3, 4), r"matmul: shapes cannot be multiplied \(3x4 and 3x4\).*\[3, 4\] "
                               r"and \[3, 4\]"),
    ("matmul", (4,), (5,), r"matmul: .*inner sizes 4 and 5 differ"),
    ("matmul", (2, 3, 4), (3, 4, 5), r"matmul: shapes \[2\] and \[3\] cannot be broadcast"),
    ("mm", (3, 4), (4,), r"mm: expected a 2-D and a 2-D tensor, got shapes \[3, 4\] and \[4\]"),
    ("bmm", (2, 3, 4), (3, 4, 2), r"bmm: batch sizes differ: shapes \[2, 3, 4\] and "
                                  r"\[3, 4, 2\]"),
    ("bmm", (3, 4), (4, 2), r"bmm: expected a 3-D and a 3-D tensor"),
    ("mv", (3, 4), (3,), r"mv: shapes cannot be multiplied \(3x4 and 3\)"),
    ("dot", (4,), (3,), r"dot: .*\[4\] and \[3\]"),
    ("dot", (2, 2), (2,), r"dot: expected a 1-D and a 1-D tensor, got shapes \[2, 2\]"),
    ("outer", (2, 2), (2,), r"outer: expected a 1-D and a 1-D tensor"),
])
def test_shape_errors_name_op_and_shapes(device, op, sa, sb, msg):
    with pytest.raises(ValueError, match=msg):
        getattr(plugrad, op)(T(R(*sa), device), T(R(*sb), device))


def test_zero_dim_and_dtype_errors(device):
    with pytest.raises(ValueError, match=r"matmul: both arguments need to be at least 1D, but "
                                         r"they are 0D and 1D"):
        plugrad.matmul(T(2.0, device), T(R(3), device))
    with pytest.raises(TypeError, match=r"matmul: expected both operands to have the same "
                                        r"dtype, but got int64\[2, 3\] and float64\[3, 2\]"):
        plugrad.matmul(T(np.ones((2, 3), int), device), T(R(3, 2), device))
    with pytest.raises(TypeError, match="dot: expected both operands to have the same dtype"):
        plugrad.dot(T(R(3), device, dtype=plugrad.float32), T(R(3), device))
    with pytest.raises(TypeError, match="matmul: expected Tensors, got Tensor and list"):
        plugrad.matmul(T(R(3), device), [1.0, 2.0, 3.0])


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("bi,bi->b", [(3, 4), (3, 4)]),
    ("ik,kj->ji", [(3, 4), (4, 2)]),
    ("ij,kj->ikj", [(2, 3), (4, 3)]),
    ("ij,j", [(3, 4), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 2, 3, 4), (4, 5)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,jj->i", [(3, 2), (2, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_numpy(device, eq, shapes):
    arrays = [R(*s) for s in shapes]
    check(plugrad.einsum(eq, *[T(a, device) for a in arrays]), np.einsum(eq, *arrays))
    check(plugrad.einsum(eq, [T(a, device) for a in arrays]), np.einsum(eq, *arrays))


def test_einsum_errors(device):
    a, b = T(R(3, 4), device), T(R(5, 2), device)
    with pytest.raises(ValueError, match=r"einsum\(\): subscript 'j' has size 5 for operand "
                                         r"of shape \[5, 2\].*size 4"):
        plugrad.einsum("ij,jk->ik", a, b)
    with pytest.raises(ValueError, match=r"einsum\(\): 2 subscripts in 'ij,jk' but 1 operands"):
        plugrad.einsum("ij,jk", a)
    with pytest.raises(ValueError, match=r"einsum\(\): subscripts 'ijk' do not fit operand "
                                         r"of shape \[3, 4\]"):
        plugrad.einsum("ijk->i", a)
    with pytest.raises(ValueError, match=r"output subscript 'z'"):
        plugrad.einsum("ij->z", a)
    with pytest.raises(ValueError, match=r"subscript 'i' has size 4 for operand of shape "
                                         r"\[3, 4\].*size 3"):
        plugrad.einsum("ii->i", a)
    with pytest.raises(ValueError, match=r"repeated subscript 'i' has sizes 1 and 3 in one "
                                         r"operand of shape \[1, 3\]"):
        plugrad.einsum("ii->i", T(R(1, 3), device))


# ---------------------------------------------------------------------- gradients
@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)),
                                   ((2, 3), (3, 2)), ((2, 2, 3), (3, 2)), ((3, 2), (2, 2, 1)),
                                   ((2, 1, 2, 3), (2, 3, 2))])
def test_matmul_gradcheck_with_batch_broadcast(device, sa, sb):
    a = T(R(*sa), device, requires_grad=True)
    b = T(R(*sb), device, requires_grad=True)
    assert gradcheck(plugrad.matmul, (a, b))


def test_matmul_gradient_of_broadcast_operand_is_summed(device):
    a, b = R(2, 3, 4), R(4, 5)
    ta, tb = T(a, device), T(b, device, requires_grad=True)
    (ta @ tb).sum().backward()
    check(tb.grad, np.einsum("bik,bij->kj", a, np.ones((2, 3, 5))))


def test_gradcheck_named_products_and_einsum(device):
    def leaf(*s):
        return T(R(*s), device, requires_grad=True)
    assert gradcheck(plugrad.mm, (leaf(2, 3), leaf(3, 2)))
    assert gradcheck(plugrad.bmm, (leaf(2, 2, 3), leaf(2, 3, 2)))
    assert gradcheck(plugrad.mv, (leaf(2, 3), leaf(3)))
    assert gradcheck(plugrad.dot, (leaf(3), leaf(3)))
    assert gradcheck(plugrad.outer, (leaf(3), leaf(2)))
    assert gradcheck(lambda a, b: plugrad.einsum("bij,jk->bki", a, b), (leaf(2, 2, 3), leaf(3, 2)))
    assert gradcheck(lambda a: plugrad.einsum("ii->i", a), (leaf(3, 3),))
    assert gradcheck(lambda a, b, c: plugrad.einsum("ij,jk,kl->il", a, b, c),
                     (leaf(2, 3), leaf(3, 2), leaf(2, 2)))


def test_matmul_double_backward(device):
    a = T(R(2, 3), device, requires_grad=True)
    b = T(R(3, 2), device, requires_grad=True)
    assert gradgradcheck(plugrad.matmul, (a, b))
    assert gradgradcheck(lambda p: (p @ p.mT).tanh(), (a,))
