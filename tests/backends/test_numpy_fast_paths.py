"""The NumPy backend's own forms of shared kernels (cheaper per call) give the shared
forms' results: ``gather`` builds ``np.take_along_axis``'s key itself (the same values,
shapes and errors), ``log_softmax`` runs in one frame (the same bits, edge rows included)."""
import warnings

import numpy as np
import pytest

from plugrad.backends.numpy import NumPyBackend
from plugrad.backends.xp_kernels import XpKernels

CASES = [((5, 7), (5, 3), 1), ((5, 7), (2, 7), 0), ((4, 5, 6), (4, 5, 2), 2),
         ((4, 5, 6), (4, 1, 6), 1), ((4, 5, 6), (1, 5, 6), -3), ((6,), (9,), 0),
         ((5, 7), (5, 1), -1), ((3, 0), (3, 0), 1)]


def _outcome(fn):
    try:
        out = fn()
    except Exception as exc:  # noqa: BLE001 - the error type is what is compared
        return type(exc).__name__
    return out.dtype.str, out.shape, out.tobytes()


@pytest.mark.parametrize("shape,index_shape,axis", CASES)
def test_gather_is_take_along_axis(shape, index_shape, axis):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    n = shape[axis]
    index = rng.integers(-n, n, index_shape) if n else np.zeros(index_shape, np.int64)
    k = NumPyBackend()
    for _ in range(2):  # the second call uses the kept aranges
        assert _outcome(lambda: k.gather(x, axis, index)) == \
            _outcome(lambda: np.take_along_axis(x, index, axis=axis))


@pytest.mark.parametrize("axis,index", [(1, np.array([[5]] * 2)), (2, np.zeros((2, 1), int)),
                                        (1, np.zeros((2, 1), bool)), (1, np.zeros((3, 1), int)),
                                        (1, np.zeros(2, int))])
def test_gather_raises_as_take_along_axis(axis, index):
    x = np.zeros((2, 3), np.float32)
    want = _outcome(lambda: np.take_along_axis(x, index, axis=axis))
    assert isinstance(want, str)
    assert _outcome(lambda: NumPyBackend().gather(x, axis, index)) == want


def _rows(dtype):
    big = np.finfo(np.float32).max
    rows = np.array([[1.0, 2.0, 3.0, -1.0], [np.inf, 0.0, 1.0, 2.0],
                     [-np.inf, -np.inf, -np.inf, -np.inf], [np.nan, 0.0, 1.0, 2.0],
                     [big, big, -big, 0.0], [-0.0, 0.0, -0.0, -200.0]])
    with np.errstate(over="ignore"):
        return rows.astype(dtype)


@pytest.mark.parametrize("errors", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("axis", [0, 1])
def test_log_softmax_parts_are_the_shared_kernels(dtype, axis, errors):
    k = NumPyBackend()
    x = _rows(dtype)
    with warnings.catch_warnings():
        if errors:
            warnings.simplefilter("error")
        got = k._log_softmax_parts(x, axis)
        want = XpKernels._log_softmax_parts(k, x, axis)
        finite = XpKernels._log_softmax_parts(k, x[:1], axis)
        assert [_outcome(lambda a=a: np.asarray(a)) for a in got[:3]] == \
            [_outcome(lambda a=a: np.asarray(a)) for a in want[:3]]
        assert got[3] == want[3]
        got = k._log_softmax_parts(x[:1], axis)  # all finite: the one-frame path
        assert [_outcome(lambda a=a: np.asarray(a)) for a in got[:3]] == \
            [_outcome(lambda a=a: np.asarray(a)) for a in finite[:3]] and got[3] is True
