"""``GradScaler``: dynamic loss scaling step by step against ``torch.amp.GradScaler("cpu")``."""
import math
import warnings

import pytest
import torch

import plugrad


def _trace(lib, device_kw, grads, **kwargs):
    """Scale, skip and update through a sequence of gradient values (inf/nan included)."""
    p = lib.nn.Parameter(lib.tensor([1.0, 2.0], **device_kw))
    opt = lib.optim.SGD([p], lr=0.5)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2, **kwargs)
    out = []
    for g in grads:
        opt.zero_grad()
        loss = scaler.scale((p * lib.tensor(g, **device_kw)).sum())
        loss.backward()
        scaled = p.grad.tolist()
        result = scaler.step(opt)
        scaler.update()
        out.append((scaled, p.detach().tolist(), scaler.get_scale(), result is None))
    return out, scaler.state_dict()


GRADS = [[1.0, 1.0], [0.5, 0.5], [1.0, 1.0], [math.inf, 1.0], [math.nan, 0.0], [1.0, -1.0],
         [2.0, 2.0], [1.0, 1.0]]


def test_dynamic_scaling_matches_torch(device):
    ours, our_state = _trace(plugrad, {"device": device}, GRADS)
    theirs, their_state = _trace(torch, {}, GRADS)
    for (s1, p1, sc1, skip1), (s2, p2, sc2, skip2) in zip(ours, theirs):
        assert p1 == p2 and sc1 == sc2 and skip1 == skip2
        assert [x if x == x else "nan" for x in s1] == [x if x == x else "nan" for x in s2]
    assert our_state == their_state
    assert [o[2] for o in ours] == [8.0, 16.0, 16.0, 8.0, 4.0, 4.0, 8.0, 8.0]


def test_unscale_then_clip_and_errors(device):
    p = plugrad.nn.Parameter(plugrad.tensor([3.0, 4.0], device=device))
    opt = plugrad.optim.SGD([p], lr=1.0)
    scaler = plugrad.amp.GradScaler("cpu", init_scale=4.0)
    with pytest.raises(RuntimeError, match="_scale is None"):
        scaler.unscale_(opt)
    scaler.scale((p * p).sum()).backward()
    assert p.grad.tolist() == [24.0, 32.0]
    scaler.unscale_(opt)
    assert p.grad.tolist() == [6.0, 8.0]
    plugrad.nn.utils.clip_grad_norm_([p], 1.0)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    assert [round(v, 5) for v in p.tolist()] == [2.4, 3.2]
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)
    scaler.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded"):
        scaler.scale(p.sum())
        scaler.update()
    scaler.update(2.0)
    assert scaler.get_scale() == 2.0


def test_state_dict_round_trip_and_settings():
    a = plugrad.amp.GradScaler("cpu", init_scale=256.0, growth_factor=3.0, backoff_factor=0.25,
                               growth_interval=7)
    b = plugrad.amp.GradScaler("cpu")
    b.load_state_dict(a.state_dict())
    assert b.state_dict() == a.state_dict() == torch.amp.GradScaler(
        "cpu", init_scale=256.0, growth_factor=3.0, backoff_factor=0.25,
        growth_interval=7).state_dict()
    b.set_growth_factor(4.0)
    b.set_backoff_factor(0.125)
    b.set_growth_interval(3)
    assert (b.get_growth_factor(), b.get_backoff_factor(), b.get_growth_interval()) == \
        (4.0, 0.125, 3)
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        b.load_state_dict({})
    with pytest.raises(ValueError, match="growth factor must be > 1.0"):
        plugrad.amp.GradScaler("cpu", growth_factor=1.0)


def test_disabled_is_a_true_no_op(device):
    p = plugrad.nn.Parameter(plugrad.tensor([1.0], device=device))
    calls = []

    class Opt(plugrad.optim.SGD):
        def step(self, closure=None):
            calls.append(closure)
            return "stepped"
    opt = Opt([p], lr=0.1)
    scaler = plugrad.amp.GradScaler("cpu", enabled=False)
    loss = (p * 2).sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    loss.backward()
    scaler.unscale_(opt)
    assert p.grad.tolist() == [2.0]
    assert scaler.step(opt, closure="c") == "stepped" and calls == ["c"]
    scaler.update()
    assert scaler.state_dict() == {} and not scaler.is_enabled()
    scaler.load_state_dict({})  # disabled: nothing to load, nothing refused


def test_cuda_spellings_without_cuda():
    if plugrad.cuda.is_available():
        pytest.skip("checks the no-CUDA behaviour")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        scaler = plugrad.cuda.amp.GradScaler()
    messages = [str(w.message) for w in seen]
    assert any("torch.cuda.amp.GradScaler(args...)` is deprecated" in m for m in messages)
    assert any("GradScaler is enabled, but CUDA is not available.  Disabling." in m
               for m in messages)
    assert not scaler.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not plugrad.amp.GradScaler(enabled=False).is_enabled()  # nanoGPT's way
