"""Optimizers: trajectories against NumPy float64 references of the published update rules
and against PyTorch (when installed) for every option combination; the Optimizer base's
groups, state dicts and errors."""
import itertools
import math
import time

import numpy as np
import pytest

import plugrad
import plugrad.optim as optim

RNG = np.random.default_rng(0)
P0 = RNG.normal(size=(2, 3))
A = RNG.uniform(0.5, 2.0, size=(2, 3))
B = RNG.normal(size=(2, 3))
STEPS = 10


def loss_of(p, lib):
    """A quadratic with a tanh, so gradients change every step: grad computed by autograd."""
    a, b = (lib.tensor(v, dtype=lib.float64).to(p.device) for v in (A, B))
    return (a * p * p + b * p).sum() + (p.sum()).tanh()


def grad_np(p):
    return 2 * A * p + B + (1 - np.tanh(p.sum()) ** 2)


def run_plugrad(name, kw, device, steps=STEPS):
    p = plugrad.tensor(P0, dtype=plugrad.float64, device=device, requires_grad=True)
    opt = getattr(optim, name)([p], **kw)
    for _ in range(steps):
        opt.zero_grad()
        loss_of(p, plugrad).backward()
        opt.step()
    return p.detach().cpu().numpy()


# ---------------------------------------------------------------- NumPy references
def sgd_np(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    p, buf = P0.copy(), None
    for _ in range(STEPS):
        g = grad_np(p) * (-1 if maximize else 1) + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def adam_np(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
            maximize=False, decoupled=False):
    p, m, v, vmax = P0.copy(), 0.0, 0.0, 0.0
    for t in range(1, STEPS + 1):
        g = grad_np(p) * (-1 if maximize else 1)
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v) if amsgrad else v
        m_hat, v_hat = m / (1 - betas[0] ** t), vmax / (1 - betas[1] ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def rmsprop_np(lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
               maximize=False):
    p, sq, avg_g, buf = P0.copy(), 0.0, 0.0, 0.0
    for _ in range(STEPS):
        g = grad_np(p) * (-1 if maximize else 1) + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        denom = sq
        if centered:
            avg_g = alpha * avg_g + (1 - alpha) * g
            denom = sq - avg_g ** 2
        denom = np.sqrt(denom) + eps
        if momentum:
            buf = momentum * buf + g / denom
            p = p - lr * buf
        else:
            p = p - lr * g / denom
    return p


def adagrad_np(lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
               maximize=False):
    p, acc = P0.copy(), np.full_like(P0, initial_accumulator_value)
    for t in range(1, STEPS + 1):
        g = grad_np(p) * (-1 if maximize else 1) + weight_decay * p
        acc = acc + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(acc) + eps)
    return p


REFERENCE_CASES = [
    ("SGD", dict(lr=0.05), sgd_np),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.1), sgd_np),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True), sgd_np),
    ("Adam", dict(lr=0.1), adam_np),
    ("Adam", dict(lr=0.1, betas=(0.8, 0.9), amsgrad=True, weight_decay=0.1), adam_np),
    ("AdamW", dict(lr=0.1, weight_decay=0.3, maximize=True), adam_np),
    ("RMSprop", dict(lr=0.01, alpha=0.9), rmsprop_np),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1), rmsprop_np),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2), adagrad_np),
    ("Adagrad", dict(lr=0.1, weight_decay=0.2, maximize=True), adagrad_np),
]


@pytest.mark.parametrize("case", range(len(REFERENCE_CASES)),
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REFERENCE_CASES)])
def test_trajectory_matches_numpy_reference(device, case):
    name, kw, reference = REFERENCE_CASES[case]
    extra = {"decoupled": True} if name == "AdamW" else {}
    expected = reference(**kw, **extra)
    np.testing.assert_allclose(run_plugrad(name, kw, device), expected, rtol=1e-10, atol=1e-12)
    assert not np.allclose(expected, P0)  # the optimizer did move the parameter


def option_grid():
    """Every combination of each optimizer's options (invalid Nesterov ones left out)."""
    grids = {
        "SGD": dict(momentum=[0.0, 0.9], dampening=[0.0, 0.3], nesterov=[False, True],
                    weight_decay=[0.0, 0.1], maximize=[False, True]),
        "Adam": dict(amsgrad=[False, True], weight_decay=[0.0, 0.1], maximize=[False, True],
                     betas=[(0.9, 0.999), (0.5, 0.8)]),
        "AdamW": dict(amsgrad=[False, True], weight_decay=[0.0, 0.1], maximize=[False, True]),
        "RMSprop": dict(momentum=[0.0, 0.7], centered=[False, True], weight_decay=[0.0, 0.1],
                        maximize=[False, True], alpha=[0.99, 0.5]),
        "Adagrad": dict(lr_decay=[0.0, 0.1], weight_decay=[0.0, 0.1],
                        initial_accumulator_value=[0.0, 0.5], maximize=[False, True]),
        "Adadelta": dict(rho=[0.9, 0.5], weight_decay=[0.0, 0.1], maximize=[False, True]),
        "NAdam": dict(weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
                      momentum_decay=[4e-3, 0.1], maximize=[False, True]),
        "RAdam": dict(weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
                      betas=[(0.9, 0.999), (0.5, 0.8)], maximize=[False, True]),
        "Adamax": dict(weight_decay=[0.0, 0.1], betas=[(0.9, 0.999), (0.5, 0.8)],
                       maximize=[False, True]),
        "Rprop": dict(etas=[(0.5, 1.2), (0.3, 1.5)], step_sizes=[(1e-6, 50), (1e-3, 0.02)],
                      maximize=[False, True]),
        "ASGD": dict(lambd=[1e-4, 0.1], alpha=[0.75, 0.5], t0=[1e6, 3],
                     weight_decay=[0.0, 0.1], maximize=[False, True]),
    }
    lrs = {"SGD": 0.05, "Adam": 0.05, "AdamW": 0.05, "RMSprop": 0.01, "Adagrad": 0.1,
           "Adadelta": 1.0, "NAdam": 0.05, "RAdam": 0.05, "Adamax": 0.05, "Rprop": 0.05,
           "ASGD": 0.05}
    cases = []
    for name, grid in grids.items():
        for values in itertools.product(*grid.values()):
            kw = dict(zip(grid, values), lr=lrs[name])
            if kw.get("nesterov") and (kw["momentum"] == 0 or kw["dampening"] != 0):
                continue
            cases.append((name, kw))
    return cases


GRID = option_grid()


@pytest.mark.parametrize("case", range(len(GRID)),
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(GRID)])
def test_trajectory_matches_pytorch(device, case):
    torch = pytest.importorskip("torch")
    name, kw = GRID[case]
    p = torch.tensor(P0, dtype=torch.float64, requires_grad=True)
    opt = getattr(torch.optim, name)([p], **kw)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_of(p, torch).backward()
        opt.step()
    np.testing.assert_allclose(run_plugrad(name, kw, device), p.detach().numpy(), rtol=1e-9,
                               atol=1e-12)


# ---------------------------------------------------------------- the Optimizer base
def leaf(device, value=(1.0, 2.0)):
    return plugrad.tensor(list(value), device=device, requires_grad=True)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "NAdam", "RAdam", "Adamax", "Rprop", "ASGD"])
def test_step_is_in_place_outside_the_graph(device, name):
    p = leaf(device)
    alias = p.detach()
    opt = getattr(optim, name)([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert opt.param_groups[0]["params"][0] is p
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert alias.tolist() == p.tolist() != [1.0, 2.0]  # aliases see the update
    assert plugrad.is_grad_enabled()


def test_invalid_hyper_parameters_raise(device):
    p = [leaf(device)]
    cases = [
        (lambda: optim.SGD(p, lr=-1.0), "Invalid learning rate: -1.0"),
        (lambda: optim.SGD(p, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
        (lambda: optim.SGD(p, lr=0.1, nesterov=True),
         "Nesterov momentum requires a momentum and zero dampening"),
        (lambda: optim.Adam(p, lr=-1.0), "Invalid learning rate: -1.0"),
        (lambda: optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (lambda: optim.Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        (lambda: optim.AdamW(p, eps=-1e-8), "Invalid epsilon value: -1e-08"),
        (lambda: optim.Adam(p, weight_decay=-1), "Invalid weight_decay value: -1"),
        (lambda: optim.RMSprop(p, alpha=-0.1), "Invalid alpha value: -0.1"),
        (lambda: optim.Adagrad(p, lr_decay=-1.0), "Invalid lr_decay value: -1.0"),
        (lambda: optim.Adagrad(p, initial_accumulator_value=-1.0),
         "Invalid initial_accumulator_value value: -1.0"),
        (lambda: optim.NAdam(p, momentum_decay=-1.0), "Invalid momentum_decay value: -1.0"),
        (lambda: optim.RAdam(p, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
        (lambda: optim.Adamax(p, eps=-1.0), "Invalid epsilon value: -1.0"),
        (lambda: optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
        (lambda: optim.ASGD(p, weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    ]
    for make, message in cases:
        with pytest.raises(ValueError) as info:
            make()
        assert str(info.value) == message


def test_invalid_parameter_lists_raise(device):
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([leaf(device) * 2], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(leaf(device), lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors.*int"):
        optim.Adam([leaf(device), 3])
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD({leaf(device)}, lr=0.1)
    p = leaf(device)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        optim.Optimizer([p], {"lr": optim.optimizer.required})


def test_param_groups_have_their_own_options(device):
    a, b = leaf(device), leaf(device)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.1, momentum=0.5)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["params"] == [b]
    (a.sum() + b.sum()).backward()
    opt.step()
    np.testing.assert_allclose(a.tolist(), [0.9, 1.9])
    np.testing.assert_allclose(b.tolist(), [0.0, 1.0])
    c = leaf(device)
    opt.add_param_group({"params": [c], "lr": 0.5})
    assert opt.param_groups[2]["momentum"] == 0.5 and opt.param_groups[2]["nesterov"] is False


def test_zero_grad(device):
    p = leaf(device)
    opt = optim.SGD([p], lr=0.1)
    p.sum().backward()
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no gradient: nothing moves
    assert p.tolist() == [1.0, 2.0]


def test_closure_is_evaluated_with_grad(device):
    p = leaf(device)
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    assert p.tolist() == [0.5, 1.0]


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("Adam", dict(lr=0.1, amsgrad=True)),
                                     ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                     ("Adagrad", dict(lr=0.1)),
                                     ("NAdam", dict(lr=0.05)), ("RAdam", dict(lr=0.05)),
                                     ("Adamax", dict(lr=0.05)), ("Rprop", dict(lr=0.05)),
                                     ("ASGD", dict(lr=0.05, t0=1))])
def test_state_dict_round_trip_resumes_the_same_trajectory(device, name, kw):
    def make():
        ps = [plugrad.tensor(P0, dtype=plugrad.float64, device=device, requires_grad=True),
              plugrad.tensor([0.5, -0.5], dtype=plugrad.float64, device=device,
                             requires_grad=True)]
        return ps, getattr(optim, name)([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.02}],
                                        **kw)

    def train(ps, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            (loss_of(ps[0], plugrad) + (ps[1] ** 4).sum()).backward()
            opt.step()

    ps, opt = make()
    train(ps, opt, 3)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.02 and sorted(sd["state"]) == [0, 1]
    if name != "SGD":
        assert sd["state"][0]["step"].item() == 3.0

    ps2, opt2 = make()
    for p, q in zip(ps, ps2):
        q.data = p.detach().clone()
    opt2.load_state_dict(sd)
    for group in sd["param_groups"]:  # loading copied: changing the source changes nothing
        group["lr"] = 100.0
    for key, value in sd["state"][0].items():
        assert opt2.state[ps2[0]][key] is not value
    assert opt2.state[ps2[0]] and opt2.param_groups[1]["params"] == [ps2[1]]
    assert opt2.param_groups[1]["lr"] == 0.02
    train(ps, opt, 4)
    train(ps2, opt2, 4)
    # NAdam's mu_product and ASGD's eta/mu are float32 scalars that loading casts to the
    # parameter's dtype (as PyTorch's load_state_dict does): the resumed run rounds less
    rtol = 1e-8 if name in ("NAdam", "ASGD") else 1e-12
    for p, q in zip(ps, ps2):
        np.testing.assert_allclose(q.tolist(), p.tolist(), rtol=rtol)


def test_load_state_dict_checks_group_sizes(device):
    opt = optim.SGD([leaf(device)], lr=0.1)
    other = optim.SGD([leaf(device), leaf(device)], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(other.state_dict())
    two = optim.SGD([{"params": [leaf(device)]}, {"params": [leaf(device)]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(two.state_dict())


def test_load_state_dict_casts_state_to_the_parameter(device):
    p32 = plugrad.tensor([1.0, 2.0], device=device, requires_grad=True)
    p64 = plugrad.tensor([1.0, 2.0], dtype=plugrad.float64, requires_grad=True)
    src = optim.Adam([p64])
    (p64 * p64).sum().backward()
    src.step()
    dst = optim.Adam([p32])
    dst.load_state_dict(src.state_dict())
    state = dst.state[p32]
    assert state["exp_avg"].dtype == plugrad.float32 and state["exp_avg"].device == p32.device
    assert state["step"].item() == 1.0


def test_repr_lists_the_groups():
    text = repr(optim.SGD([leaf("cpu")], lr=0.1, momentum=0.9))
    assert text.startswith("SGD (\nParameter Group 0\n") and "    momentum: 0.9" in text


def test_step_has_no_per_element_python_loop():
    """A million-element Adam step is array work: well under a second on the CPU."""
    p = plugrad.zeros(1_000_000, requires_grad=True)
    p.grad = plugrad.ones(1_000_000)
    opt = optim.Adam([p], lr=0.1, amsgrad=True, weight_decay=0.1)
    opt.step()
    start = time.perf_counter()
    for _ in range(3):
        opt.step()
    assert (time.perf_counter() - start) / 3 < 1.0
    assert math.isclose(p[0].item(), -0.4, rel_tol=1e-3)
