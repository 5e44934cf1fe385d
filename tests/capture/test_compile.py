"""plugrad.compile: replays equal eager runs bit for bit; what cannot be captured runs eagerly
with its reason; guards that fail recapture. On cpu and ref (ref: small and short)."""
from __future__ import annotations

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F
from plugrad.capture import GraphBreakError

DEVICES = ["cpu", "ref"]


def _celsius(compiled, device, steps):
    celsius = plugrad.tensor([0.0, 100.0], device=device)
    fahrenheit = plugrad.tensor([32.0, 212.0], device=device)
    weight = plugrad.tensor(0.0, requires_grad=True, device=device)
    bias = plugrad.tensor(0.0, requires_grad=True, device=device)
    learning_rate = 0.0001

    def step():
        prediction = weight * celsius + bias
        error = ((prediction - fahrenheit) ** 2).mean()
        error.backward()
        with plugrad.no_grad():
            weight.sub_(learning_rate * weight.grad)
            bias.sub_(learning_rate * bias.grad)
        weight.grad.zero_()
        bias.grad.zero_()
        return error

    fn = plugrad.compile(step) if compiled else step
    errors = [fn().item() for _ in range(steps)]
    return errors, weight.item(), bias.item(), fn


@pytest.mark.parametrize("device", DEVICES)
def test_seeds_celsius_loop_bit_for_bit(device):
    steps = 200 if device == "cpu" else 12
    eager = _celsius(False, device, steps)
    compiled = _celsius(True, device, steps)
    assert compiled[:3] == eager[:3]
    report = compiled[3].explain()
    assert report.replays == steps - 3 and report.graph_count == 1
    assert report.break_reasons == []


def _mlp_step(device, opt_name, dropout, compiled, steps):
    plugrad.manual_seed(0)
    layers = [nn.Linear(6, 8), nn.ReLU()] + ([nn.Dropout(0.2)] if dropout else []) + [
        nn.Linear(8, 3)]
    model = nn.Sequential(*layers).to(device)
    make = {"sgd": lambda p: plugrad.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
            "adam": lambda p: plugrad.optim.Adam(p, lr=0.01, amsgrad=True),
            "adamw": lambda p: plugrad.optim.AdamW(p, lr=0.01)}[opt_name]
    opt = make(model.parameters())
    x = plugrad.randn(5, 6, device=device)
    y = plugrad.tensor([0, 2, 1, 1, 0], device=device)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = plugrad.compile(step) if compiled else step
    losses = [fn(x, y).item() for _ in range(steps)]
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], fn


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("opt_name,dropout", [("sgd", False), ("adam", True), ("adamw", False)])
def test_training_step_with_optimizer_bit_for_bit(device, opt_name, dropout):
    steps = 12 if device == "cpu" else 6
    eager = _mlp_step(device, opt_name, dropout, False, steps)
    compiled = _mlp_step(device, opt_name, dropout, True, steps)
    assert compiled[0] == eager[0]
    for a, b in zip(compiled[1], eager[1]):
        np.testing.assert_array_equal(a, b)
    assert compiled[2].explain().replays == steps - 3, str(compiled[2].explain())


def test_returned_loss_of_a_replay_keeps_its_flags_and_refuses_a_second_backward():
    w = plugrad.ones(3, requires_grad=True)

    @plugrad.compile
    def step(x):
        loss = (w * x).sum()
        loss.backward()
        return loss

    x = plugrad.arange(3.0)
    outs = [step(x) for _ in range(4)]
    assert step.explain().replays == 1
    assert outs[-1].requires_grad and outs[-1].grad_fn.name() == outs[0].grad_fn.name()
    assert w.grad.tolist() == [0.0, 4.0, 8.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        outs[-1].backward()


# ---------------------------------------------------------------------- graph breaks
def _breaks(fn, *args, calls=3):
    compiled = plugrad.compile(fn)
    results = [compiled(*args) for _ in range(calls)]
    return compiled.explain(), results


def test_item_runs_eagerly_and_names_the_line():
    w = plugrad.ones(2)

    def fn(x):
        s = (x * w).sum()
        if s.item() > 0:
            return s * 2
        return s

    report, results = _breaks(fn, plugrad.ones(2))
    assert report.replays == 0 and report.eager_calls == 2
    assert "read to Python" in report.break_reasons[0]
    assert "test_compile.py" in report.break_reasons[0]
    assert [r.item() for r in results] == [4.0, 4.0, 4.0]


def test_fullgraph_raises_on_a_break():
    fn = plugrad.compile(lambda x: x.sum().item(), fullgraph=True)
    with pytest.raises(GraphBreakError, match="read to Python"):
        fn(plugrad.ones(2))

    @plugrad.compile(fullgraph=True)
    def fine(x):
        return x * 2

    for _ in range(3):
        assert fine(plugrad.ones(2)).tolist() == [2.0, 2.0]


@pytest.mark.parametrize("fn,expected", [
    (lambda x: x.nonzero(), [[1], [2]]),
    (lambda x: x.masked_select(x > 0), [1.0, 2.0]),
    (lambda x: plugrad.unique(x), [0.0, 1.0, 2.0])])
def test_data_dependent_shape_breaks(fn, expected):
    report, results = _breaks(fn, plugrad.tensor([0.0, 1.0, 2.0]))
    assert report.replays == 0 and report.break_reasons
    assert results[-1].tolist() == expected


def test_tensor_hook_breaks():
    w = plugrad.ones(2, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(1))

    def fn(x):
        (w * x).sum().backward()

    report, _ = _breaks(fn, plugrad.ones(2))
    assert "hook" in report.break_reasons[0]
    assert len(seen) == 3  # every call ran, eagerly


def test_module_forward_hook_runs_eagerly():
    model = nn.Linear(2, 2)
    calls = []
    model.register_forward_hook(lambda m, i, o: calls.append(1))
    compiled = plugrad.compile(model)
    with plugrad.no_grad():
        for _ in range(3):
            compiled(plugrad.ones(1, 2))
    assert len(calls) == 3
    assert "hook" in compiled.explain().break_reasons[0]


def test_anomaly_mode_runs_eagerly():
    fn = plugrad.compile(lambda x: x * 2)
    with pytest.warns(UserWarning, match="Anomaly Detection"), \
            plugrad.autograd.detect_anomaly():
        fn(plugrad.ones(1))
    assert "anomaly" in fn.explain().break_reasons[0]


def test_output_continuing_a_graph_made_outside_runs_eagerly():
    w = plugrad.ones(2, requires_grad=True)
    v = w * 3  # a graph made before the call, which the call's graph would continue
    report, results = _breaks(lambda x: (v * x).sum(), plugrad.ones(2))
    assert "made before the call" in report.break_reasons[0]
    results[-1].backward()  # the eager result has its graph
    assert w.grad.tolist() == [3.0, 3.0]


def test_tensor_kept_in_a_list_runs_eagerly():
    history = []

    def fn(x):
        y = x * 2
        history.append(y)
        return x + 1

    report, _ = _breaks(fn, plugrad.ones(2))
    assert "list" in report.break_reasons[0]
    assert len(history) == 3 and history[0] is not history[1]


def test_host_data_that_changes_is_never_replayed():
    rng = np.random.default_rng(0)

    def fn(x):
        return x + plugrad.tensor(rng.standard_normal(2).astype(np.float32))

    x = plugrad.zeros(2)
    compiled = plugrad.compile(fn)
    values = [compiled(x).tolist() for _ in range(6)]
    assert len({tuple(v) for v in values}) == 6  # a fresh draw every call, as eagerly
    assert "does not repeat" in compiled.explain().break_reasons[0]


def test_random_kernels_draw_afresh_on_each_replay():
    def run(compiled):
        plugrad.manual_seed(3)
        fn = (plugrad.compile if compiled else (lambda f: f))(
            lambda x: F.dropout(x, 0.5) + plugrad.rand(4))
        return [fn(plugrad.ones(4)).tolist() for _ in range(6)]

    eager, compiled = run(False), run(True)
    assert eager == compiled
    assert len({tuple(v) for v in compiled}) == 6


# ---------------------------------------------------------------------- guards
def test_new_shapes_capture_again_and_old_ones_still_replay():
    fn = plugrad.compile(lambda x: (x * 3).sum(0))
    for n in (2, 3, 2, 3, 2, 3, 2, 3):
        x = plugrad.arange(float(n * 2)).reshape(n, 2)
        assert fn(x).tolist() == (x * 3).sum(0).tolist()
    assert fn.explain().graph_count == 2


def test_guards_that_change_every_call_end_in_eager_with_the_reason():
    fn = plugrad.compile(lambda x: x + 1)
    for n in range(1, 60):
        assert fn(plugrad.zeros(n)).tolist() == [1.0] * n
    report = fn.explain()
    assert any("change on almost every call" in r for r in report.break_reasons)
    assert report.eager_calls > 0 and report.replays == 0


def test_least_recently_used_guard_is_dropped_first():
    fn = plugrad.compile(lambda x: x * 2)
    for n in list(range(1, 10)) * 3:  # 9 shapes over a cache of 8: each evicts another
        assert fn(plugrad.ones(n)).tolist() == [2.0] * n
    assert not fn.explain().break_reasons


@pytest.mark.parametrize("name", ["SGD", "AdamW", "RMSprop"])
def test_learning_rate_schedule_is_followed(name):
    """SGD and Adam(W) read ``lr`` afresh on every replay (one capture for the whole run);
    other optimizers guard on it (a capture per value)."""
    compiled_fn = []

    def run(compiled):
        w = plugrad.nn.Parameter(plugrad.ones(3))
        opt = getattr(plugrad.optim, name)([w], lr=0.1)
        sched = plugrad.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)

        def step(x):
            opt.zero_grad()
            loss = (w * x).sum()
            loss.backward()
            opt.step()
            return loss

        fn = plugrad.compile(step) if compiled else step
        compiled_fn.append(fn)
        for _ in range(12):
            fn(plugrad.arange(3.0))
            sched.step()
        return w.tolist()

    assert run(True) == run(False)
    report = compiled_fn[0].explain()
    assert report.graph_count == (1 if name != "RMSprop" else 4), str(report)  # 4 lr values


def test_python_number_in_globals_is_a_guard():
    global SCALE
    fn = plugrad.compile(_scaled)
    x = plugrad.ones(2)
    SCALE = 2.0
    assert [fn(x).tolist() for _ in range(3)][-1] == [2.0, 2.0]
    SCALE = 5.0
    assert fn(x).tolist() == [5.0, 5.0]


SCALE = 2.0


def _scaled(x):
    return x * SCALE


def test_training_flag_is_a_guard():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.9))
    compiled = plugrad.compile(model)
    x = plugrad.ones(2, 3)
    with plugrad.no_grad():
        model.eval()
        ref = model(x)
        for _ in range(3):
            assert plugrad.equal(compiled(x), ref)
        model.train()
        assert not plugrad.equal(compiled(x), ref)  # dropout is on again
        model.eval()
        assert plugrad.equal(compiled(x), ref)


def test_requires_grad_flip_recaptures():
    w = plugrad.ones(2, requires_grad=True)
    b = plugrad.zeros(2, requires_grad=True)

    @plugrad.compile
    def step(x):
        loss = (w * x + b).sum()
        loss.backward()
        return loss

    for _ in range(3):
        step(plugrad.ones(2))
    b.requires_grad_(False)
    b.grad = None
    step(plugrad.ones(2))
    assert b.grad is None and w.grad.tolist() == [4.0, 4.0]


def test_replayed_target_check_still_raises():
    model = nn.Linear(3, 4)

    @plugrad.compile
    def loss_of(x, y):
        with plugrad.no_grad():
            return F.cross_entropy(model(x), y)

    x = plugrad.ones(2, 3)
    for _ in range(3):
        loss_of(x, plugrad.tensor([0, 3]))
    assert loss_of.explain().replays == 1
    with pytest.raises(IndexError, match="out of bounds"):
        loss_of(x, plugrad.tensor([0, 4]))


# ---------------------------------------------------------------------- modules
def test_compiled_module_is_a_module():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    compiled = plugrad.compile(model)
    assert isinstance(compiled, nn.Module)
    assert list(compiled.state_dict()) == [f"_orig_mod.{k}" for k in model.state_dict()]
    assert len(list(compiled.parameters())) == 4
    assert compiled._orig_mod is model
    assert plugrad.compile(model[0]).weight is model[0].weight  # attributes read through
    x = plugrad.randn(5, 3)
    with plugrad.no_grad():
        outs = [compiled(x) for _ in range(4)]
        expected = model(x)
    for o in outs:
        assert plugrad.equal(o, expected)
    assert compiled.explain().replays == 2  # two equal recordings, then replays


def test_disable_returns_the_model_itself():
    model = nn.Linear(2, 2)
    assert plugrad.compile(model, disable=True) is model
    with pytest.raises(RuntimeError, match="mode or options"):
        plugrad.compile(model, mode="max-autotune", options={})


def test_decisions_on_values_made_inside_are_checked_where_they_stand():
    weight = plugrad.arange(12.0).reshape(4, 3)

    @plugrad.compile
    def pick(i):
        return weight.index_select(0, i * 1)  # the index is made inside the call

    for _ in range(3):
        assert pick(plugrad.tensor([0, 1])).tolist() == weight[:2].tolist()
    with pytest.raises(IndexError, match="out of bounds"):  # raised as eagerly
        pick(plugrad.tensor([0, 7]))
    with pytest.raises(RuntimeError, match="came out differently"):  # a negative index now
        pick(plugrad.tensor([-1, 0]))
    assert pick(plugrad.tensor([-1, 0])).tolist() == [weight[3].tolist(), weight[0].tolist()]
    assert "diverged" in pick.explain().break_reasons[0]


def test_embedding_of_a_position_range_replays():
    emb = nn.Embedding(8, 2)

    @plugrad.compile
    def embed(idx):
        with plugrad.no_grad():
            return emb(idx) + emb(plugrad.arange(idx.shape[0]))

    idx = plugrad.tensor([3, 1, 4])
    for _ in range(4):
        out = embed(idx)
    assert embed.explain().replays == 2
    with plugrad.no_grad():
        assert plugrad.equal(out, emb(idx) + emb(plugrad.arange(3)))
    with pytest.raises(IndexError, match="index out of range"):
        embed(plugrad.tensor([3, 1, 9]))


@pytest.mark.parametrize("device", DEVICES)
def test_dead_temporaries_are_reused_as_buffers_with_the_same_results(device):
    """The ReLU and its backward write into the array they consume (on cpu, where the
    backend has in-place forms; ref has none), also where that array is a product its bias
    was added into: bit for bit the plain replay's values."""
    def run(reuse):
        plugrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
        opt = plugrad.optim.SGD(model.parameters(), lr=0.1)
        x = plugrad.randn(5, 6, device=device)

        def step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss

        fn = plugrad.compile(step)
        fn.reuse_buffers = reuse
        losses = [fn(x).item() for _ in range(6)]
        return losses, [p.detach().cpu().tolist() for p in model.parameters()], fn.explain()

    reused, plain = run(True), run(False)
    assert reused[:2] == plain[:2]
    assert plain[2].buffers_reused == 0
    assert (reused[2].buffers_reused >= 2) if device == "cpu" else reused[2].buffers_reused == 0


def test_a_method_of_a_plain_object_reaches_its_attributes():
    """``self`` of a trainer: its tensors are state (read, their grads left behind), its
    numbers are guards."""
    class Trainer:
        def __init__(self):
            self.w = plugrad.ones(3, requires_grad=True)
            self.scale = 0.5

        def step(self, x):
            (self.w * x * self.scale).sum().backward()
            with plugrad.no_grad():
                self.w -= 0.1 * self.w.grad
            self.w.grad = None

    def run(compiled):
        t = Trainer()
        fn = plugrad.compile(t.step) if compiled else t.step
        for i in range(8):
            if i == 5:
                t.scale = 2.0
            fn(plugrad.arange(3.0))
        return t.w.tolist(), fn

    (eager, _), (compiled, fn) = run(False), run(True)
    assert compiled == eager
    assert fn.explain().replays >= 3 and fn.explain().graph_count == 2


def test_compiler_namespace_is_compiling_and_disable():
    import plugrad.compiler as compiler
    seen, inside = [], []
    note = inside.append  # a list the function named would be a guard (its contents)

    @plugrad.compile
    def probe(x):
        note(compiler.is_compiling())
        return x + 1

    for _ in range(3):
        probe(plugrad.ones(1))
    assert inside == [True, True]  # two recordings; the replay runs no Python

    note_seen = seen.append

    @compiler.disable
    def log(x):
        note_seen(compiler.is_compiling())
        return x

    fn = plugrad.compile(lambda x: log(x * 2) + 1)
    for _ in range(3):
        assert fn(plugrad.ones(1)).tolist() == [3.0]
    assert seen == [False, False, False]  # the capture stops where the disabled call starts
    assert "compiler.disable" in fn.explain().break_reasons[0]
    assert not compiler.is_compiling()
    compiler.reset()


@pytest.mark.parametrize("device", DEVICES)
def test_lstm_language_model_step_replays_bit_for_bit(device):
    """Embedding, a 2-layer LSTM (its cell an autograd.Function), a head, cross-entropy,
    clipping and Adam: one capture, the eager losses and weights."""
    def run(compiled):
        plugrad.manual_seed(0)
        emb, lstm, head = nn.Embedding(11, 4), nn.LSTM(4, 6, num_layers=2, batch_first=True), \
            nn.Linear(6, 11)
        model = nn.ModuleList([emb, lstm, head]).to(device)
        opt = plugrad.optim.Adam(model.parameters(), lr=1e-2)
        x = plugrad.randint(0, 11, (2, 5), device=device)
        y = plugrad.randint(0, 11, (2, 5), device=device)

        def step(x, y):
            opt.zero_grad()
            out, _ = lstm(emb(x))
            loss = F.cross_entropy(head(out).reshape(-1, 11), y.reshape(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss

        fn = plugrad.compile(step) if compiled else step
        losses = [fn(x, y).item() for _ in range(5 if device == "cpu" else 4)]
        return losses, [p.detach().cpu().tolist() for p in model.parameters()], fn

    eager, compiled = run(False), run(True)
    assert compiled[:2] == eager[:2]
    assert compiled[2].explain().replays >= 1, str(compiled[2].explain())
