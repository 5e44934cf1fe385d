"""The contract's nn kernels: NumPy's fast overrides agree with the composite fallbacks, and
the composites themselves run on the pure-Python reference backend (via the layer tests)."""
import subprocess
import sys

import numpy as np
import pytest

from plugrad.backends.contract import Backend, optional_kernels
from plugrad.backends.numpy import NumPyBackend
from plugrad.backends.xp_kernels import XpKernels

NN_KERNELS = ("unfold2d", "fold2d", "conv2d", "conv2d_grad_input", "conv2d_grad_weight",
              "max_pool2d", "layer_norm", "gelu")
GEOMS = [((3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
         ((2, 3), (2, 1), ((0, 1), (2, 0)), (1, 2), 2)]


@pytest.fixture(scope="module")
def fast_and_composite():
    class Composite(NumPyBackend):
        pass
    for name in NN_KERNELS:  # the contract's bodies, on NumPy primitives
        setattr(Composite, name, getattr(Backend, name))
    return NumPyBackend(), Composite()


def test_kernels_are_optional_with_composites():
    assert set(NN_KERNELS) <= set(optional_kernels())
    assert all(getattr(NumPyBackend, n) is vars(XpKernels)[n] for n in NN_KERNELS)


@pytest.mark.parametrize("geom", GEOMS)
def test_conv_kernels_agree(fast_and_composite, geom):
    fast, comp = fast_and_composite
    kernel, stride, pads, dil, groups = geom
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((6, 4 // groups) + kernel)
    out = fast.conv2d(x, w, stride, pads, dil, groups)
    np.testing.assert_allclose(out, comp.conv2d(x, w, stride, pads, dil, groups), atol=1e-12)
    g = rng.standard_normal(out.shape)
    np.testing.assert_allclose(fast.conv2d_grad_input(g, w, (7, 6), stride, pads, dil, groups),
                               comp.conv2d_grad_input(g, w, (7, 6), stride, pads, dil, groups),
                               atol=1e-12)
    np.testing.assert_allclose(
        fast.conv2d_grad_weight(g, x, w.shape, stride, pads, dil, groups),
        comp.conv2d_grad_weight(g, x, w.shape, stride, pads, dil, groups), atol=1e-12)
    cols = fast.unfold2d(x, kernel, stride, pads, dil)
    np.testing.assert_array_equal(cols, comp.unfold2d(x, kernel, stride, pads, dil))
    np.testing.assert_allclose(fast.fold2d(cols, (7, 6), kernel, stride, pads, dil),
                               comp.fold2d(cols, (7, 6), kernel, stride, pads, dil), atol=1e-12)


def test_fold_is_the_adjoint_of_unfold(fast_and_composite):
    fast, _ = fast_and_composite
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 5, 5))
    geom = ((2, 2), (2, 1), ((1, 0), (0, 1)), (1, 2))
    cols = fast.unfold2d(x, *geom)
    y = rng.standard_normal(cols.shape)
    assert np.isclose((cols * y).sum(), (x * fast.fold2d(y, (5, 5), *geom)).sum())


def test_max_pool_layer_norm_gelu_agree(fast_and_composite):
    fast, comp = fast_and_composite
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 6, 5))
    args = ((3, 2), (2, 2), ((1, 1), (1, 1)), (1, 2))
    for a, b in zip(fast.max_pool2d(x, *args), comp.max_pool2d(x, *args)):
        np.testing.assert_array_equal(a, b)
    w, b = rng.standard_normal(5), rng.standard_normal(5)
    for a, c in zip(fast.layer_norm(x, w, b, 1, 1e-5), comp.layer_norm(x, w, b, 1, 1e-5)):
        np.testing.assert_allclose(a, c, atol=1e-12)
    for mode in ("none", "tanh"):
        np.testing.assert_allclose(fast.gelu(x, mode), comp.gelu(x, mode), atol=1e-14)


def test_cpu_table_uses_the_numpy_nn_kernels():
    """In a fresh interpreter (this module installs the kernels itself), a plain
    ``import plugrad`` must give the cpu table NumPy's nn kernels."""
    code = ("import plugrad\nfrom plugrad.core.registry import get_registry\n"
            "t = get_registry().table('cpu')\n"
            f"print(all(t.sources[n] == 'numpy' for n in {NN_KERNELS!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "True"
