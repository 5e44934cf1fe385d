"""The NumPy backend's ``gather`` builds ``np.take_along_axis``'s key itself (cheaper per
call): the same values, shapes and errors, for every axis and broadcast index."""
import numpy as np
import pytest

from plugrad.backends.numpy import NumPyBackend

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
