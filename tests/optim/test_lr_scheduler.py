"""LR schedulers: the learning rates over many steps against the closed forms, and against
PyTorch's schedulers (when installed), plus state dicts and errors."""
import math

import pytest

import plugrad
import plugrad.optim as optim
from plugrad.optim import lr_scheduler as S

BASE = (0.1, 0.02)


def make_opt(name="SGD", **kw):
    groups = [{"params": [plugrad.zeros(1, requires_grad=True)], "lr": lr} for lr in BASE]
    return getattr(optim, name)(groups, lr=BASE[0], **kw)


def trajectory(scheduler, opt, steps):
    """lr of each group after construction and after each step."""
    out = [scheduler.get_last_lr()]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
        assert out[-1] == [g["lr"] for g in opt.param_groups]
    return out


def one_cycle_closed(step, total, max_lr, pct=0.3, div=25.0, final_div=1e4, anneal="cos",
                     three_phase=False):
    initial = max_lr / div
    low = initial / final_div
    cos = lambda a, b, p: b + (a - b) / 2 * (math.cos(math.pi * p) + 1)  # noqa: E731
    lin = lambda a, b, p: (b - a) * p + a  # noqa: E731
    f = cos if anneal == "cos" else lin
    up = pct * total - 1
    if three_phase:
        down = 2 * pct * total - 2
        if step <= up:
            return f(initial, max_lr, step / up)
        if step <= down:
            return f(max_lr, initial, (step - up) / (down - up))
        return f(initial, low, (step - down) / (total - 1 - down))
    if step <= up:
        return f(initial, max_lr, step / up)
    return f(max_lr, low, (step - up) / (total - 1 - up))


CASES = {
    "StepLR": (lambda o: S.StepLR(o, step_size=3, gamma=0.5),
               lambda b, t: b * 0.5 ** (t // 3), 40),
    "MultiStepLR": (lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.3),
                    lambda b, t: b * 0.3 ** sum(t >= m for m in [2, 5, 5, 11]), 30),
    "ExponentialLR": (lambda o: S.ExponentialLR(o, gamma=0.9),
                      lambda b, t: b * 0.9 ** t, 50),
    "CosineAnnealingLR": (lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
                          lambda b, t: 0.001 + (b - 0.001) * (1 + math.cos(math.pi * t / 10)) / 2,
                          45),
    "LambdaLR": (lambda o: S.LambdaLR(o, lambda e: 1 / (1 + e)), lambda b, t: b / (1 + t), 30),
    "LinearLR": (lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8),
                 lambda b, t: b * (0.25 + 0.65 * min(t, 8) / 8), 20),
    "OneCycleLR-cos": (lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=50),
                       None, 49),
    "OneCycleLR-linear-3": (lambda o: S.OneCycleLR(o, max_lr=1.0, epochs=4,
                                                   steps_per_epoch=10, pct_start=0.25,
                                                   anneal_strategy="linear",
                                                   three_phase=True), None, 39),
}


def closed_form(name, group, base, t):
    if name == "OneCycleLR-cos":
        return one_cycle_closed(t, 50, [1.0, 0.5][group])
    if name == "OneCycleLR-linear-3":
        return one_cycle_closed(t, 40, 1.0, pct=0.25, anneal="linear", three_phase=True)
    return CASES[name][1](base, t)


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_matches_closed_form(name):
    make, _, steps = CASES[name]
    opt = make_opt()
    lrs = trajectory(make(opt), opt, steps)
    for t, values in enumerate(lrs):
        for g, (lr, base) in enumerate(zip(values, BASE)):
            assert lr == pytest.approx(closed_form(name, g, base, t), rel=1e-9, abs=1e-15), t


TORCH_CASES = {
    "StepLR": dict(step_size=3, gamma=0.5),
    "MultiStepLR": dict(milestones=[2, 5, 5, 11], gamma=0.3),
    "ExponentialLR": dict(gamma=0.9),
    "CosineAnnealingLR": dict(T_max=7, eta_min=0.001),
    "LambdaLR": dict(lr_lambda=lambda e: 0.95 ** e + 0.1),
    "LinearLR": dict(start_factor=0.1, total_iters=6),
    "OneCycleLR": dict(max_lr=0.5, total_steps=60, pct_start=0.4),
    "OneCycleLR-3": dict(max_lr=[0.5, 0.2], total_steps=60, three_phase=True,
                         anneal_strategy="linear"),
    "ConstantLR": dict(factor=0.4, total_iters=7),
    "MultiplicativeLR": dict(lr_lambda=lambda e: 0.97 if e % 2 else 0.9),
    "PolynomialLR": dict(total_iters=12, power=2.0),
    "CosineAnnealingWarmRestarts": dict(T_0=5, eta_min=0.001),
    "CosineAnnealingWarmRestarts-2": dict(T_0=3, T_mult=2),
    "CyclicLR": dict(base_lr=0.01, max_lr=[0.2, 0.1], step_size_up=4, step_size_down=6),
    "CyclicLR-2": dict(base_lr=0.01, max_lr=0.3, step_size_up=5, mode="triangular2"),
    "CyclicLR-exp": dict(base_lr=0.01, max_lr=0.3, step_size_up=3, mode="exp_range",
                         gamma=0.95, base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-fn": dict(base_lr=0.01, max_lr=0.3, step_size_up=3, cycle_momentum=False,
                        scale_fn=lambda x: 0.5 ** x, scale_mode="iterations"),
}


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_schedule_matches_pytorch(name, optimizer):
    torch = pytest.importorskip("torch")
    kw = TORCH_CASES[name]
    cls = name.split("-")[0]
    extra = {"momentum": 0.9} if optimizer == "SGD" else {}
    steps = 59 if cls == "OneCycleLR" else 40
    if cls == "CyclicLR" and optimizer == "Adam" and "cycle_momentum" not in kw:
        kw = dict(kw, base_momentum=0.8, max_momentum=0.9)  # Adam's beta1 cycles
    opt = make_opt(optimizer, **extra)
    sched = getattr(S, cls)(opt, **kw)
    tgroups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in BASE]
    topt = getattr(torch.optim, optimizer)(tgroups, lr=BASE[0], **extra)
    tsched = getattr(torch.optim.lr_scheduler, cls)(topt, **kw)
    key = "momentum" if optimizer == "SGD" else "betas"
    for step in range(steps + 1):
        if step:
            opt.step()
            sched.step()
            topt.step()
            tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12), step
        for g, tg in zip(opt.param_groups, topt.param_groups):  # OneCycleLR cycles these
            assert g[key] == pytest.approx(tg[key], rel=1e-12), step


def test_cosine_restarts_rise_back_after_t_max():
    opt = make_opt()
    lrs = [v[0] for v in trajectory(S.CosineAnnealingLR(opt, T_max=4), opt, 8)]
    assert lrs[4] == pytest.approx(0.0, abs=1e-15) and lrs[8] == pytest.approx(0.1)


def test_state_dict_round_trip():
    opt = make_opt()
    sched = S.StepLR(opt, step_size=2, gamma=0.5)
    trajectory(sched, opt, 5)
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 5 and sd["base_lrs"] == list(BASE)
    opt2 = make_opt()
    sched2 = S.StepLR(opt2, step_size=10, gamma=0.1)
    sched2.load_state_dict(sd)
    assert sched2.step_size == 2 and sched2.last_epoch == 5
    opt2.load_state_dict(opt.state_dict())
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr() == [0.1 * 0.5 ** 3, 0.02 * 0.5 ** 3]


def test_lambda_state_dict_skips_functions_keeps_callable_objects():
    class Warmup:
        def __init__(self):
            self.factor = 2.0

        def __call__(self, epoch):
            return self.factor * epoch

    opt = make_opt()
    fn = Warmup()
    sched = S.LambdaLR(opt, [fn, lambda e: 1.0])
    fn.factor = 3.0
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"factor": 3.0}, None]
    fn2 = Warmup()
    sched2 = S.LambdaLR(make_opt(), [fn2, lambda e: 1.0])
    sched2.load_state_dict(sd)
    assert fn2.factor == 3.0
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(opt, [fn])


def test_step_with_epoch_uses_closed_form():
    opt = make_opt()
    sched = S.ExponentialLR(opt, gamma=0.5)
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(3)
    assert sched.get_last_lr() == [0.1 * 0.125, 0.02 * 0.125]


def test_resuming_needs_initial_lr():
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
        S.StepLR(make_opt(), step_size=1, last_epoch=3)


def test_scheduler_errors():
    opt = make_opt()
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        S.LinearLR(opt, start_factor=0.0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        S.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError, match="total_steps OR"):
        S.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="pct_start"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="step")
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        S.OneCycleLR(make_opt("Adagrad"), max_lr=1.0, total_steps=10)
    sched = S.OneCycleLR(make_opt(), max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), step_size=1)


@pytest.mark.parametrize("kwargs", [
    dict(mode="min", factor=0.5, patience=2),
    dict(mode="max", factor=0.1, patience=1, threshold=0.1, threshold_mode="abs"),
    dict(mode="min", factor=0.5, patience=0, cooldown=2, min_lr=0.02),
])
def test_reduce_on_plateau_matches_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    metrics = [1.0, 0.9, 0.95, 0.97, 0.96, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.7, 0.71, 0.72]
    p = plugrad.zeros(2, requires_grad=True)
    opt = plugrad.optim.SGD([p], lr=0.1)
    sched = plugrad.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    tp = torch.zeros(2, requires_grad=True)
    topt = torch.optim.SGD([tp], lr=0.1)
    tsched = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
    for m in metrics:
        sched.step(m)
        tsched.step(m)
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)


def test_reduce_on_plateau_cuts_after_patience_closed_form():
    p = plugrad.zeros(1, requires_grad=True)
    opt = plugrad.optim.SGD([p], lr=1.0)
    sched = plugrad.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    lrs = []
    for m in [3.0, 3.0, 3.0, 3.0, 3.0]:
        sched.step(m)
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]


def test_reduce_on_plateau_refuses_factor_at_least_one():
    opt = plugrad.optim.SGD([plugrad.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        plugrad.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)


def _composite(lib, opt, kind):
    S_ = lib.optim.lr_scheduler
    if kind == "sequential":
        warm = S_.LinearLR(opt, start_factor=0.1, total_iters=4)
        decay = S_.ExponentialLR(opt, gamma=0.9)
        cosine = S_.CosineAnnealingLR(opt, T_max=6)
        return S_.SequentialLR(opt, [warm, decay, cosine], milestones=[4, 9])
    return S_.ChainedScheduler([S_.ConstantLR(opt, factor=0.5, total_iters=3),
                                S_.ExponentialLR(opt, gamma=0.8)])


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_schedules_of_schedules_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    opt = make_opt()
    tgroups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in BASE]
    topt = torch.optim.SGD(tgroups, lr=BASE[0])
    sched, tsched = _composite(plugrad, opt, kind), _composite(torch, topt, kind)
    for step in range(20):
        if step:
            opt.step()
            sched.step()
            topt.step()
            tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12), step
        assert [g["lr"] for g in opt.param_groups] == pytest.approx(
            [g["lr"] for g in topt.param_groups], rel=1e-12), step
    restored = _composite(plugrad, make_opt(), kind)
    restored.load_state_dict(sched.state_dict())
    assert restored.last_epoch == sched.last_epoch if kind == "sequential" else True
    assert [s.last_epoch for s in restored._schedulers] == [s.last_epoch
                                                            for s in sched._schedulers]


def test_schedules_of_schedules_refuse_what_pytorch_refuses():
    opt, other = make_opt(), make_opt()
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        S.SequentialLR(opt, [], milestones=[])
    with pytest.raises(ValueError, match="one more than the number of milestone points"):
        S.SequentialLR(opt, [S.ExponentialLR(opt, 0.9)], milestones=[3])
    with pytest.raises(ValueError, match="same optimizer"):
        S.ChainedScheduler([S.ExponentialLR(opt, 0.9), S.ExponentialLR(other, 0.9)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        S.ChainedScheduler([S.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="mode is invalid"):
        S.CyclicLR(opt, 0.01, 0.1, mode="sawtooth")
    with pytest.raises(ValueError, match="must support momentum"):
        S.CyclicLR(optim.Adagrad([plugrad.zeros(1, requires_grad=True)]), 0.01, 0.1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        S.ConstantLR(opt, factor=1.5)
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        S.MultiplicativeLR(opt, lr_lambda=0.9)
