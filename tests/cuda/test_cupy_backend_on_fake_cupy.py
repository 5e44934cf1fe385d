"""The ``cuda`` backend's code paths, run on a FAKE CuPy (``fake_cupy.py``, NumPy underneath).

These tests check *plugrad's* CuPy backend and its plumbing (device indices, host transfers,
fused-kernel source text, ``plugrad.cuda``), not CuPy and not a GPU: what they cannot show
(real kernels, NaN handling of CuPy's reductions, speed, multi-GPU peer access) is listed in
``docs/gpu.md`` for a run on a GPU machine.

Each test gets a fresh ``CuPyBackend`` registered for ``cuda`` in the process-wide registry,
with ``cupy``/``cupyx`` in ``sys.modules`` replaced by the fake; both are restored after.
"""
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F
from plugrad import optim

import fake_cupy  # noqa: E402 - tests/cuda is on the path (pytest puts it there)
from fake_cuda_fixtures import fake_cuda, fake_cuda2, on_gpu, same  # noqa: E402,F401


# ====================================================================== basics
def test_fake_cuda_is_available_and_cupy_is_fake(fake_cuda):
    assert plugrad.cuda.is_available() and plugrad.cuda.device_count() == 1
    import cupy
    assert cupy.__fake__  # these tests never run real CuPy


def test_fake_cuda_factories(fake_cuda):
    for t, dt in [(plugrad.zeros(2, 3, device="cuda"), plugrad.float32),
                  (plugrad.ones(4, dtype=plugrad.int64, device="cuda"), plugrad.int64),
                  (plugrad.full((2,), 7.5, device="cuda"), plugrad.float32),
                  (plugrad.arange(5, device="cuda"), plugrad.int64),
                  (plugrad.randn(3, 3, device="cuda"), plugrad.float32),
                  (plugrad.rand(3, dtype=plugrad.float16, device="cuda"), plugrad.float16),
                  (plugrad.tensor(2.0, dtype=plugrad.float64, device="cuda"), plugrad.float64)]:
        assert t.device == "cuda:0" and t.is_cuda and on_gpu(t) and t.dtype is dt
    assert plugrad.tensor(2.0, device="cuda").shape == ()  # 0-d stays 0-d
    assert plugrad.arange(5, device="cuda").tolist() == [0, 1, 2, 3, 4]
    r = plugrad.rand(1000, dtype=plugrad.float16, device="cuda").cpu().numpy()
    assert r.min() >= 0 and r.max() < 1


def test_fake_cuda_elementwise_broadcasting_and_weak_scalars(fake_cuda):
    a_np = np.random.default_rng(0).standard_normal((3, 1, 4)).astype(np.float32)
    b_np = np.random.default_rng(1).standard_normal((5, 1)).astype(np.float32)
    outs = {}
    for dev in ("cpu", "cuda"):
        a, b = plugrad.tensor(a_np, device=dev), plugrad.tensor(b_np, device=dev)
        outs[dev] = [(a + b * 2.5 - 1) / (b.abs() + 3), a.exp().log1p(), (a > b) & (b < 0.5),
                     plugrad.where(a > 0, a, 0.0), a ** 2, a ** 3, a.sigmoid(), a.tanh(),
                     (a * 1000).floor() // 7, a.sign(), plugrad.maximum(a, b)]
    for c, g in zip(outs["cpu"], outs["cuda"]):
        assert g.device == "cuda:0" and on_gpu(g)
        same(c, g, 1e-5)
    i = plugrad.arange(4, device="cuda")
    assert (i * 2).dtype is plugrad.int64 and (i * 2.5).dtype is plugrad.float32
    f = plugrad.ones(3, device="cuda")
    assert (f * 2.5).dtype is plugrad.float32 and (f + 1).dtype is plugrad.float32


def test_fake_cuda_ieee_edge_cases_without_warnings(fake_cuda):
    x = plugrad.tensor([0.0, -1.0, 1.0], device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.log().tolist()[0] == -math.inf
        assert math.isnan(x.sqrt().tolist()[1])
        assert math.isnan((x / 0).tolist()[0]) and (x / 0).tolist()[2] == math.inf


def test_fake_cuda_reductions_match_cpu(fake_cuda):
    x_np = np.random.default_rng(2).standard_normal((4, 5, 6))
    for dt in (plugrad.float32, plugrad.float64):
        c = plugrad.tensor(x_np, dtype=dt)
        g = c.to("cuda")
        for f in (lambda t: t.sum(), lambda t: t.sum((0, 2)), lambda t: t.mean(1, keepdim=True),
                  lambda t: t.max(), lambda t: t.max(1)[0], lambda t: t.max(1)[1],
                  lambda t: t.argmin(2), lambda t: t.prod(0), lambda t: t.cumsum(1),
                  lambda t: t.logsumexp(2), lambda t: t.softmax(-1), lambda t: t.log_softmax(0),
                  lambda t: t.var(1), lambda t: t.amin((0, 1))):
            same(f(c), f(g), 1e-5 if dt is plugrad.float32 else 1e-12)
    h = plugrad.ones(60_000, 2, dtype=plugrad.float16, device="cuda")
    assert h.sum(0).tolist() == [60000.0, 60000.0]  # float16 accumulates in float32


def test_fake_cuda_indexing_scatter_sort(fake_cuda):
    rng = np.random.default_rng(3)
    x_np = rng.standard_normal((4, 6)).astype(np.float32)
    idx_np = rng.integers(0, 6, (4, 3))
    for dt in (plugrad.float32, plugrad.int64, plugrad.int32, plugrad.int8):
        res = {}
        for dev in ("cpu", "cuda"):
            x = plugrad.tensor(x_np * 10, device=dev).to(dt)
            idx = plugrad.tensor(idx_np, device=dev)
            src = plugrad.ones(4, 3, dtype=dt, device=dev)
            rep = plugrad.tensor([[0, 0, 0]] * 4, device=dev)  # repeated indices accumulate
            res[dev] = [x.gather(1, idx), x.scatter_add(1, idx, src),
                        x.scatter_add(1, rep, src), x[1:, ::2], x[[0, 2]], x[x > 0],
                        x.index_select(0, plugrad.tensor([3, 0], device=dev)),
                        x.flip(1), (x > 0).nonzero(), plugrad.argsort(x, 1, descending=True),
                        plugrad.sort(x, 0)[0], F.pad(x.float(), (1, 2), value=-1.0)]
            y = x.clone()
            y[1:3, 2:] = 5
            y[0] = y[1]
            res[dev].append(y)
        for c, g in zip(*res.values()):
            same(c, g)
    b = plugrad.tensor([True, False, True], device="cuda")
    out = plugrad.zeros(2, dtype=plugrad.bool, device="cuda").scatter_add(
        0, plugrad.tensor([1, 1, 0], device="cuda"), b)
    assert out.tolist() == [True, True]


def test_fake_cuda_argsort_is_stable_both_ways(fake_cuda):
    x = plugrad.tensor([1.0, 3.0, 1.0, float("nan"), 3.0], device="cuda")
    assert plugrad.argsort(x).tolist() == [0, 2, 1, 4, 3]
    assert plugrad.argsort(x, descending=True).tolist() == [3, 1, 4, 0, 2]


def test_fake_cuda_matmul(fake_cuda):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))
    same(plugrad.tensor(a) @ plugrad.tensor(b),
         plugrad.tensor(a, device="cuda") @ plugrad.tensor(b, device="cuda"), 1e-12)


# ====================================================================== nn kernels
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(padding=2, dilation=2),
                                dict(groups=2, padding=(1, 0))])
def test_fake_cuda_conv2d_and_grads_match_cpu(fake_cuda, kw):
    rng = np.random.default_rng(5)
    x_np, w_np = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 4 // kw.get(
        "groups", 1), 3, 3))
    got = {}
    for dev in ("cpu", "cuda"):
        x = plugrad.tensor(x_np, device=dev, requires_grad=True)
        w = plugrad.tensor(w_np, device=dev, requires_grad=True)
        y = F.conv2d(x, w, **kw)
        (y * y).sum().backward()
        got[dev] = (y, x.grad, w.grad)
    for c, g in zip(got["cpu"], got["cuda"]):
        same(c, g, 1e-10)


def test_fake_cuda_max_pool_layer_norm_gelu_match_cpu(fake_cuda):
    rng = np.random.default_rng(6)
    x_np = rng.standard_normal((2, 3, 7, 8))
    got = {}
    for dev in ("cpu", "cuda"):
        x = plugrad.tensor(x_np, device=dev, requires_grad=True)
        w = plugrad.tensor(rng.standard_normal(8) * 0 + 1.5, device=dev, requires_grad=True)
        b = plugrad.tensor(np.full(8, 0.25), device=dev, requires_grad=True)
        p, i = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
        outs = [p, i, F.layer_norm(x, (8,), w, b), F.layer_norm(x, (7, 8)),
                F.gelu(x), F.gelu(x, approximate="tanh")]
        sum(o.float().sum() if o.dtype.is_floating_point else 0 for o in outs).backward()
        got[dev] = outs + [x.grad, w.grad, b.grad]
    for c, g in zip(got["cpu"], got["cuda"]):
        same(c, g, 1e-10)


def test_fake_cuda_fused_kernels_run_and_match_their_references(fake_cuda):
    """The ElementwiseKernel sources are compiled with g++ by the fake and run per element."""
    from plugrad.backends.cupy.kernels import SPECS
    x = plugrad.randn(64, dtype=plugrad.float64, device="cuda") * 4
    fake_cupy.stats()["elementwise"].clear()
    F.gelu(x), F.gelu(x, approximate="tanh"), x.sigmoid(), x.softmax(0)
    F.layer_norm(x.reshape(8, 8), (8,), plugrad.ones(8, dtype=plugrad.float64, device="cuda"),
                 plugrad.zeros(8, dtype=plugrad.float64, device="cuda"))
    used = fake_cupy.stats()["elementwise"]
    assert {"plugrad_gelu_erf", "plugrad_gelu_tanh", "plugrad_sigmoid", "plugrad_sub_exp",
            "plugrad_normalize_affine"} <= set(used)
    cp = fake_cupy
    rng = np.random.default_rng(7)
    for spec in SPECS.values():
        n_in = len(spec.in_params.split(","))
        for dt in (np.float32, np.float64):
            args = [rng.standard_normal((3, 5)).astype(dt) * 3 for _ in range(n_in)]
            want = spec.reference(*args)
            k = cp.ElementwiseKernel(spec.in_params, spec.out_params, spec.operation, spec.name)
            got = k(*[cp.asarray(a) for a in args]).get()
            assert got.dtype == dt
            np.testing.assert_allclose(got, want, rtol=1e-5 if dt is np.float32 else 1e-12,
                                       atol=1e-6 if dt is np.float32 else 1e-12)


def test_fake_cuda_float16_takes_the_unfused_paths(fake_cuda):
    x = plugrad.randn(4, 8, device="cuda")
    h = x.half()
    for f in (F.gelu, lambda t: F.gelu(t, approximate="tanh"), lambda t: t.sigmoid(),
              lambda t: t.softmax(-1), lambda t: F.layer_norm(t, (8,))):
        np.testing.assert_allclose(f(h).float().cpu().numpy(), f(x).cpu().numpy(),
                                   rtol=1e-2, atol=1e-2)


# ====================================================================== training
def _train(model_fn, x_np, y_np, device, loss_fn, steps=3):
    plugrad.manual_seed(0)
    model = model_fn()
    model.to(device)
    opt = optim.Adam(model.parameters(), lr=1e-2)
    x, y = plugrad.tensor(x_np, device=device), plugrad.tensor(y_np, device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


def test_fake_cuda_mlp_training_matches_cpu(fake_cuda):
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((16, 10)).astype(np.float32), rng.integers(0, 3, 16)

    def mlp():
        return nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 3))
    cpu = _train(mlp, x, y, "cpu", F.cross_entropy)
    gpu = _train(mlp, x, y, "cuda", F.cross_entropy)
    np.testing.assert_allclose(cpu[0], gpu[0], rtol=1e-5)
    for a, b in zip(cpu[1], gpu[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_fake_cuda_cnn_training_matches_cpu(fake_cuda):
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((4, 1, 8, 8)).astype(np.float32), rng.integers(0, 2, 4)

    def cnn():
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(4, 4, 3, stride=2), nn.Flatten(), nn.Linear(4, 2))
    cpu = _train(cnn, x, y, "cpu", F.cross_entropy)
    gpu = _train(cnn, x, y, "cuda", F.cross_entropy)
    np.testing.assert_allclose(cpu[0], gpu[0], rtol=1e-5)
    for a, b in zip(cpu[1], gpu[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_fake_cuda_training_step_never_copies_to_the_host(fake_cuda):
    """No primitive syncs with the host. (cross_entropy and gather do, in the core: they check
    class/index ranges with ``.item()``/``to_numpy`` -- counted here, reported separately.)"""
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.GELU(), nn.Flatten(), nn.LayerNorm(12),
                          nn.Linear(12, 3)).to("cuda")
    opt = optim.Adam(model.parameters(), lr=0.1)
    x = plugrad.randn(5, 2, 4, 4, device="cuda")
    y = plugrad.randn(5, 3, device="cuda")
    fake_cupy.stats()["to_host"] = 0
    for _ in range(2):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    assert fake_cupy.stats()["to_host"] == 0
    labels = plugrad.tensor([0, 2, 1, 1, 0], device="cuda")
    F.cross_entropy(model(x), labels).backward()
    assert fake_cupy.stats()["to_host"] <= 3  # the core's range checks (see docstring)


# ====================================================================== devices
def test_fake_cuda_moves_and_autograd_across_devices(fake_cuda):
    a = plugrad.randn(3, requires_grad=True)
    g = a.to("cuda")
    assert g.device == "cuda:0" and on_gpu(g) and g.requires_grad
    (g * g).sum().backward()
    assert a.grad.device == "cpu"
    same(a.grad, (2 * a).detach())
    back = g.cpu()
    assert back.device == "cpu" and isinstance(back._data, np.ndarray)
    assert plugrad.zeros(2).cuda().device == "cuda:0"


def test_fake_cuda_device_mismatch_names_both_devices(fake_cuda):
    with pytest.raises(plugrad.DeviceError, match=r"cpu.*cuda|cuda.*cpu"):
        plugrad.ones(2) + plugrad.ones(2, device="cuda")


def test_fake_cuda_second_device_index_plumbing(fake_cuda2):
    assert plugrad.cuda.device_count() == 2
    x = plugrad.randn(3, 4, device="cuda:1")
    assert x.device == "cuda:1" and x._data.device.id == 1
    assert plugrad.cuda.current_device() == 0  # making it did not switch devices
    # Every op runs with cuda:1 current (the fake, like CuPy, refuses a kernel elsewhere).
    y = (x.exp() * 2 + 1).sum(1).softmax(0)
    assert y.device == "cuda:1" and y._data.device.id == 1
    w = plugrad.randn(4, 2, device="cuda:1", requires_grad=True)
    (x @ w).sum().backward()
    assert w.grad.device == "cuda:1" and w.grad._data.device.id == 1
    z = x.to("cuda:0")
    assert z.device == "cuda:0" and z._data.device.id == 0
    same(z, x)
    with pytest.raises(plugrad.DeviceError, match="cuda:0.*cuda:1|cuda:1.*cuda:0"):
        z + x
    plugrad.cuda.set_device(1)
    try:
        assert plugrad.cuda.current_device() == 1
        assert plugrad.zeros(2, device="cuda")._data.device.id == 1  # "cuda" = current
        with plugrad.cuda.device(0):
            assert plugrad.cuda.current_device() == 0
        assert plugrad.cuda.current_device() == 1
    finally:
        plugrad.cuda.set_device(0)
    with pytest.raises(ValueError, match="invalid CUDA device index 5"):
        plugrad.cuda.set_device(5)


def test_fake_cuda_plugrad_cuda_functions(fake_cuda):
    cuda = plugrad.cuda
    assert cuda.current_device() == 0 and "Fake CUDA device 0" in cuda.get_device_name()
    cuda.synchronize(), cuda.synchronize("cuda:0")
    assert fake_cupy.stats()["synchronize"] >= 2
    before = cuda.memory_allocated()
    t = plugrad.empty(1 << 20, device="cuda")
    assert cuda.memory_allocated() - before >= 4 << 20
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    del t
    assert cuda.memory_allocated() == before
    assert cuda.max_memory_allocated() >= before + (4 << 20)
    cuda.empty_cache()
    assert cuda.memory_reserved() == cuda.memory_allocated()
    cuda.manual_seed_all(5)
    a = plugrad.randn(4, device="cuda").tolist()
    cuda.manual_seed(5)
    assert plugrad.randn(4, device="cuda").tolist() == a
    plugrad.manual_seed(5)
    assert plugrad.randn(4, device="cuda").tolist() == a


def test_fake_cuda_load_with_map_location(fake_cuda, tmp_path):
    # (key names chosen so that the header length's low byte is not 0x80: plugrad.load takes
    # such a file for a pickle -- a core bug reported separately, on every device)
    sd = {"weight": plugrad.randn(3, 2), "n": plugrad.arange(4)}
    path = tmp_path / "ckpt.safetensors"
    plugrad.save(sd, path)
    loaded = plugrad.load(path, map_location="cuda")
    assert all(t.device == "cuda:0" and on_gpu(t) for t in loaded.values())
    same(loaded["weight"], sd["weight"])
    plugrad.save({"weight": loaded["weight"]}, tmp_path / "gpu.safetensors")
    back = plugrad.load(tmp_path / "gpu.safetensors", map_location="cpu")
    assert back["weight"].device == "cpu"
    again = plugrad.load(tmp_path / "gpu.safetensors")
    assert again["weight"].device == "cuda:0"


def test_fake_cuda_dlpack_import(fake_cuda):
    import cupy
    arr = cupy.arange(6, dtype=cupy.float32)
    out = fake_cuda.from_dlpack(arr)
    assert out is arr or out.get().tolist() == arr.get().tolist()


def test_fake_cuda_dlpack_through_the_core(fake_cuda):
    import cupy
    arr = cupy.arange(3, dtype=cupy.float32)
    t = plugrad.from_dlpack(arr)  # CUDA memory goes to cuda, shared
    assert t.device == "cuda:0" and plugrad.utils.backend.array(t) is arr
    assert t.__dlpack_device__() == (2, 0)  # tensors export the CuPy array itself
    host = np.arange(3.0)
    h = plugrad.from_dlpack(host, device="cuda")  # a host object is copied over
    host[0] = 9.0
    assert h.device == "cuda:0" and on_gpu(h) and h.tolist() == [0.0, 1.0, 2.0]


def test_fake_cuda_dlpack_to_another_gpu_copies(fake_cuda2):
    import cupy
    arr = cupy.arange(3, dtype=cupy.float32)  # on GPU 0
    t = plugrad.from_dlpack(arr, device="cuda:1")
    assert t.device == "cuda:1" and plugrad.utils.backend.array(t).device.id == 1
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_fake_cuda_guards_are_not_installed_on_one_gpu(fake_cuda):
    assert plugrad.cuda.device_count() == 1
    assert "add" not in vars(fake_cuda)  # the per-op device switch costs nothing on one GPU


# ====================================================================== without CuPy
def test_without_cupy_cuda_is_unavailable_and_import_does_not_load_cupy():
    code = ("import sys; sys.modules['cupy'] = None\n"
            "import plugrad\n"
            "assert 'cupy' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
            "assert not plugrad.cuda.is_available() and plugrad.cuda.device_count() == 0\n"
            "from plugrad.core.registry import get_registry\n"
            "print(get_registry().backends['cuda'].unavailable_reason())\n"
            "try:\n    plugrad.zeros(1, device='cuda')\nexcept Exception as e:\n"
            "    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "plugrad[cuda12]" in out and "not available" in out


def test_fake_cuda_bare_cuda_means_the_current_device(fake_cuda):
    """``"cuda"`` tensors land on ``cuda:0`` and mix with explicit ``cuda:0`` ones."""
    a = plugrad.ones(2, device="cuda")
    b = plugrad.ones(2, device="cuda:0")
    assert a.device == "cuda:0" and (a + b).tolist() == [2.0, 2.0]
    assert plugrad.ones(2).to("cuda").device == "cuda:0"
