"""MultiheadAttention and the Transformer family against PyTorch: state dicts both ways,
outputs, attention weights and the gradients of inputs and every parameter (float64)."""
import itertools
import warnings

import numpy as np
import pytest

import plugrad
import plugrad.nn as nn
import plugrad.nn.functional as F

from .helpers import host

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

RNG = np.random.default_rng(11)


def load_torch_into_ours(theirs, ours, device="cpu"):
    ours.load_state_dict({k: plugrad.tensor(v.detach().numpy(), device=device)
                          for k, v in theirs.state_dict().items()})


def mine(a, device="cpu", grad=False):
    if a is None:
        return None
    dtype = plugrad.bool if a.dtype == bool else plugrad.float64
    return plugrad.tensor(a, dtype=dtype, device=device, requires_grad=grad)


def theirs_t(a, grad=False):
    if a is None:
        return None
    return torch.tensor(a, dtype=torch.bool if a.dtype == bool else torch.float64,
                        requires_grad=grad)


def check(ours, theirs, out_o, out_t, leaves, atol=1e-10):
    """Outputs equal; a random weighting of the outputs gives equal gradients for the
    leaves and every parameter."""
    out_o = [o for o in out_o if o is not None]
    out_t = [t for t in out_t if t is not None]
    assert len(out_o) == len(out_t)
    loss_o, loss_t = 0, 0
    for a, b in zip(out_o, out_t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(host(a), b.detach().numpy(), atol=atol, rtol=1e-8)
        g = RNG.standard_normal(tuple(b.shape))
        loss_o = loss_o + (a * mine(g, a.device)).sum()
        loss_t = loss_t + (b * theirs_t(g)).sum()
    loss_o.backward()
    loss_t.backward()
    for a, b in leaves:
        np.testing.assert_allclose(host(a.grad), b.grad.numpy(), atol=atol, rtol=1e-8)
    for name, p in theirs.named_parameters():
        if p.grad is None:
            assert ours.get_parameter(name).grad is None, name
            continue
        np.testing.assert_allclose(host(ours.get_parameter(name).grad), p.grad.numpy(),
                                   atol=atol, rtol=1e-8, err_msg=name)


def pair(ours_cls, theirs_cls, *args, device="cpu", **kw):
    torch.manual_seed(0)
    theirs = theirs_cls(*args, **kw).double()
    ours = ours_cls(*args, **kw).double().to(device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_torch_into_ours(theirs, ours, device)
    return ours, theirs


# ====================================================================== MultiheadAttention
E, H, L, S, N = 8, 2, 3, 4, 2


def mha_inputs(kind, batch_first, batched, kdim, vdim):
    def shape(length, dim):
        if not batched:
            return (length, dim)
        return (N, length, dim) if batch_first else (length, N, dim)
    q = RNG.standard_normal(shape(L, E))
    if kind == "self":
        return q, q, q
    k = RNG.standard_normal(shape(S, kdim))
    return q, k, (k if kind == "kv_same" else RNG.standard_normal(shape(S, vdim)))


def mha_masks(which, batched, S):
    attn = kpm = None
    if "attn_bool" in which:
        attn = np.triu(np.ones((L, S), dtype=bool), 2)
    if "attn_float3d" in which:
        attn = RNG.standard_normal(((N if batched else 1) * H, L, S))
    if "kpm_bool" in which:
        kpm = np.zeros((N, S), dtype=bool)
        kpm[0, -1] = True
    if "kpm_float" in which:
        kpm = np.where(RNG.random((N, S)) < 0.3, -1e3, 0.0)
    if kpm is not None and not batched:
        kpm = kpm[0]
    return attn, kpm


MHA_CONFIGS = [c for c in itertools.product(
    ["self", "kv_same", "cross"], [False, True], [True, False],
    [dict(), dict(add_bias_kv=True), dict(add_zero_attn=True),
     dict(add_bias_kv=True, add_zero_attn=True, bias=False)],
    [(), ("attn_bool",), ("attn_float3d", "kpm_float"), ("attn_bool", "kpm_bool"),
     ("kpm_bool",)]) if c[2] or not c[1]]  # unbatched input ignores batch_first


@pytest.mark.parametrize("kind,batch_first,batched,options,masks", MHA_CONFIGS)
def test_multihead_attention_matches_torch(kind, batch_first, batched, options, masks):
    kdim, vdim = (5, 3) if kind == "cross" else (None, None)
    ours, theirs = pair(nn.MultiheadAttention, tnn.MultiheadAttention, E, H, kdim=kdim,
                        vdim=vdim, batch_first=batch_first, **options)
    arrays = mha_inputs(kind, batch_first, batched, kdim or E, vdim or E)
    leaves, qo, qt = [], [], []
    for a in arrays:  # keep the identity of self-attention's (q, q, q) on both sides
        hit = [i for i, b in enumerate(arrays[:len(qo)]) if b is a]
        if hit:
            qo.append(qo[hit[0]])
            qt.append(qt[hit[0]])
            continue
        qo.append(mine(a, grad=True))
        qt.append(theirs_t(a, grad=True))
        leaves.append((qo[-1], qt[-1]))
    attn, kpm = mha_masks(masks, batched, L if kind == "self" else S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mismatched mask types are deprecated, not wrong
        for average in (True, False):
            kw_o = dict(attn_mask=mine(attn), key_padding_mask=mine(kpm),
                        average_attn_weights=average)
            kw_t = dict(attn_mask=theirs_t(attn), key_padding_mask=theirs_t(kpm),
                        average_attn_weights=average)
            out_o, out_t = ours(*qo, **kw_o), theirs(*qt, **kw_t)
            ours.zero_grad()
            theirs.zero_grad()
            for (a, b) in leaves:
                a.grad, b.grad = None, None
            check(ours, theirs, list(out_o), list(out_t), leaves)
        out_o = ours(*qo, need_weights=False, **kw_o)
        out_t = theirs(*qt, need_weights=False, **kw_t)
    assert out_o[1] is None and out_t[1] is None
    np.testing.assert_allclose(host(out_o[0]), out_t[0].detach().numpy(), atol=1e-10)


def test_multihead_attention_on_every_backend(device):
    ours, theirs = pair(nn.MultiheadAttention, tnn.MultiheadAttention, 4, 2, kdim=3,
                        add_bias_kv=True, add_zero_attn=True, device=device)
    q, k = RNG.standard_normal((2, 2, 4)), RNG.standard_normal((3, 2, 3))
    v = RNG.standard_normal((3, 2, 4))
    kpm = np.array([[False, False, True], [False, False, False]])
    leaves = [(mine(a, device, True), theirs_t(a, True)) for a in (q, k, v)]
    out_o = ours(*(a for a, _ in leaves), key_padding_mask=mine(kpm, device))
    out_t = theirs(*(b for _, b in leaves), key_padding_mask=theirs_t(kpm))
    check(ours, theirs, list(out_o), list(out_t), leaves)


def test_multihead_attention_parameter_names_and_init():
    for kw in (dict(), dict(kdim=3, vdim=5), dict(add_bias_kv=True, bias=False)):
        ours, theirs = nn.MultiheadAttention(8, 2, **kw), tnn.MultiheadAttention(8, 2, **kw)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert ours._qkv_same_embed_dim == theirs._qkv_same_embed_dim
        assert repr(ours) == repr(theirs)
    m = nn.MultiheadAttention(8, 2)
    bound = (6 / (24 + 8)) ** 0.5  # xavier_uniform of (3E, E)
    w = host(m.in_proj_weight)
    assert w.min() >= -bound and w.max() <= bound and w.max() > 0.8 * bound
    assert not host(m.in_proj_bias).any() and not host(m.out_proj.bias).any()


def test_multihead_attention_is_causal_hint():
    ours, theirs = pair(nn.MultiheadAttention, tnn.MultiheadAttention, E, H, batch_first=True)
    x = RNG.standard_normal((N, L, E))
    causal = np.triu(np.ones((L, L), dtype=bool), 1)
    for mask in (causal, np.zeros((L, L), dtype=bool)):  # the hint wins over a wrong mask
        out_o = ours(mine(x), mine(x), mine(x), attn_mask=mine(mask), is_causal=True,
                     need_weights=False)[0]
        out_t = theirs(theirs_t(x), theirs_t(x), theirs_t(x), attn_mask=theirs_t(mask),
                       is_causal=True, need_weights=False)[0]
        np.testing.assert_allclose(host(out_o), out_t.detach().numpy(), atol=1e-10)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        ours(mine(x), mine(x), mine(x), is_causal=True)


def test_multihead_attention_dropout():
    m = nn.MultiheadAttention(E, H, dropout=0.5, batch_first=True).double()
    x = mine(RNG.standard_normal((N, L, E)))
    plugrad.manual_seed(1)
    a, wa = m(x, x, x)
    plugrad.manual_seed(1)
    b, _ = m(x, x, x)
    assert np.array_equal(host(a), host(b))
    m.eval()
    c, wc = m(x, x, x)
    assert not np.allclose(host(a), host(c))
    np.testing.assert_allclose(host(wc).sum(-1), 1.0)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare kinds and messages
        return type(e), str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda lib, m: m(lib.randn(3, 2, 8), lib.randn(4, 2, 8), lib.randn(5, 2, 8)),
    lambda lib, m: m(lib.randn(3, 2, 6), lib.randn(3, 2, 6), lib.randn(3, 2, 6)),
    lambda lib, m: m(lib.randn(3, 2, 8), lib.randn(4, 8), lib.randn(4, 8)),
    lambda lib, m: m(lib.randn(3, 2, 2, 8), lib.randn(4, 8), lib.randn(4, 8)),
    lambda lib, m: m(*(lib.randn(3, 2, 8),) * 3, attn_mask=lib.zeros(3, 4)),
    lambda lib, m: m(*(lib.randn(3, 2, 8),) * 3, attn_mask=lib.zeros(3, 3, 3)),
    lambda lib, m: m(*(lib.randn(3, 2, 8),) * 3, attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
    lambda lib, m: m(*(lib.randn(3, 2, 8),) * 3, key_padding_mask=lib.zeros(2, 3, 1) > 0),
    lambda lib, m: lib.nn.MultiheadAttention(8, 3),
    lambda lib, m: lib.nn.MultiheadAttention(0, 2),
])
def test_multihead_attention_errors_like_torch(call):
    ours = _error(lambda: call(plugrad, nn.MultiheadAttention(8, 2)))
    theirs = _error(lambda: call(torch, tnn.MultiheadAttention(8, 2)))
    assert ours is not None and theirs is not None
    assert ours[0] is theirs[0], (ours, theirs)
    assert ours[1].replace("plugrad", "torch") == theirs[1], (ours, theirs)


def test_key_padding_mask_shape_error_names_the_expected_shape():
    m = nn.MultiheadAttention(8, 2)
    x = plugrad.randn(3, 2, 8)
    with pytest.raises(AssertionError, match=r"key_padding_mask of shape \(batch, source length"
                                             r"\) = \(2, 3\), but got \[3, 3\]"):
        m(x, x, x, key_padding_mask=plugrad.zeros(3, 3) > 0)


# ====================================================================== layers and stacks
D, FF = 8, 12
ACTIVATIONS = {"relu": ("relu", "relu"), "gelu": ("gelu", "gelu"),
               "callable": (F.silu, TF.silu)}
LAYER_CONFIGS = list(itertools.product([False, True], ["relu", "gelu", "callable"],
                                       [False, True], [True, False]))


def seq(batch_first, length, batched=True):
    if not batched:
        return RNG.standard_normal((length, D))
    return RNG.standard_normal((N, length, D) if batch_first else (length, N, D))


@pytest.mark.parametrize("norm_first,act,batch_first,bias", LAYER_CONFIGS)
def test_encoder_layer_matches_torch(norm_first, act, batch_first, bias):
    kw = dict(dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first,
              bias=bias)
    ours, theirs = pair(nn.TransformerEncoderLayer, tnn.TransformerEncoderLayer, D, H,
                        activation=ACTIVATIONS[act][0], **kw) if act != "callable" else \
        _pair_callable(nn.TransformerEncoderLayer, tnn.TransformerEncoderLayer, **kw)
    x = seq(batch_first, S)
    kpm = np.array([[False, False, False, True], [False] * 4])
    for src_mask, pad in [(None, None), (np.triu(np.ones((S, S), dtype=bool), 1), kpm),
                          (RNG.standard_normal((S, S)), np.where(kpm, -np.inf, 0.0))]:
        xo, xt = mine(x, grad=True), theirs_t(x, grad=True)
        ours.zero_grad()
        theirs.zero_grad()
        out_o = ours(xo, src_mask=mine(src_mask), src_key_padding_mask=mine(pad))
        out_t = theirs(xt, src_mask=theirs_t(src_mask), src_key_padding_mask=theirs_t(pad))
        check(ours, theirs, [out_o], [out_t], [(xo, xt)], atol=1e-9)


def _pair_callable(ours_cls, theirs_cls, **kw):
    torch.manual_seed(0)
    theirs = theirs_cls(D, H, activation=TF.silu, **kw).double()
    ours = ours_cls(D, H, activation=F.silu, **kw).double()
    load_torch_into_ours(theirs, ours)
    return ours, theirs


@pytest.mark.parametrize("norm_first,act,batch_first,bias", LAYER_CONFIGS)
def test_decoder_layer_matches_torch(norm_first, act, batch_first, bias):
    kw = dict(dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first,
              bias=bias)
    ours, theirs = pair(nn.TransformerDecoderLayer, tnn.TransformerDecoderLayer, D, H,
                        activation=ACTIVATIONS[act][0], **kw) if act != "callable" else \
        _pair_callable(nn.TransformerDecoderLayer, tnn.TransformerDecoderLayer, **kw)
    tgt, mem = seq(batch_first, L), seq(batch_first, S)
    causal = np.triu(np.ones((L, L), dtype=bool), 1)
    mem_kpm = np.array([[False, False, True, True], [False] * 4])
    for masks in [dict(), dict(tgt_mask=causal, memory_key_padding_mask=mem_kpm,
                               tgt_key_padding_mask=np.array([[False, False, True]] * 2)),
                  dict(tgt_mask=np.where(causal, -np.inf, 0.0), tgt_is_causal=True,
                       memory_mask=RNG.standard_normal((L, S)))]:
        to, tt = mine(tgt, grad=True), theirs_t(tgt, grad=True)
        mo, mt = mine(mem, grad=True), theirs_t(mem, grad=True)
        ours.zero_grad()
        theirs.zero_grad()
        conv_o = {k: (mine(v) if isinstance(v, np.ndarray) else v) for k, v in masks.items()}
        conv_t = {k: (theirs_t(v) if isinstance(v, np.ndarray) else v) for k, v in masks.items()}
        check(ours, theirs, [ours(to, mo, **conv_o)], [theirs(tt, mt, **conv_t)],
              [(to, tt), (mo, mt)], atol=1e-9)


@pytest.mark.parametrize("batch_first,norm_first,batched", [(False, False, True),
                                                            (True, True, True),
                                                            (False, True, False)])
def test_transformer_matches_torch(batch_first, norm_first, batched):
    kw = dict(d_model=D, nhead=H, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: enable_nested_tensor is True, but ...
        ours, theirs = pair(nn.Transformer, tnn.Transformer, **kw)
    src, tgt = seq(batch_first, S, batched), seq(batch_first, L, batched)
    so, st = mine(src, grad=True), theirs_t(src, grad=True)
    to, tt = mine(tgt, grad=True), theirs_t(tgt, grad=True)
    tgt_mask_o = nn.Transformer.generate_square_subsequent_mask(L, dtype=plugrad.float64)
    tgt_mask_t = tnn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    kpm = np.array([[False, False, False, True], [False] * 4])
    masks_o, masks_t = dict(tgt_mask=tgt_mask_o), dict(tgt_mask=tgt_mask_t)
    if batched:
        masks_o.update(src_key_padding_mask=mine(kpm), memory_key_padding_mask=mine(kpm))
        masks_t.update(src_key_padding_mask=theirs_t(kpm), memory_key_padding_mask=theirs_t(kpm))
    check(ours, theirs, [ours(so, to, **masks_o)], [theirs(st, tt, **masks_t)],
          [(so, st), (to, tt)], atol=1e-9)


def test_transformer_on_every_backend(device):
    kw = dict(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
              dim_feedforward=6, dropout=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = pair(nn.Transformer, tnn.Transformer, device=device, **kw)
    src, tgt = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((2, 2, 4))
    so, st = mine(src, device, True), theirs_t(src, True)
    to, tt = mine(tgt, device, True), theirs_t(tgt, True)
    mask_o = nn.Transformer.generate_square_subsequent_mask(2, device=device,
                                                           dtype=plugrad.float64)
    mask_t = tnn.Transformer.generate_square_subsequent_mask(2, dtype=torch.float64)
    check(ours, theirs, [ours(so, to, tgt_mask=mask_o)], [theirs(st, tt, tgt_mask=mask_t)],
          [(so, st), (to, tt)], atol=1e-9)


def test_our_transformer_state_dict_loads_into_torch():
    kw = dict(d_model=D, nhead=H, num_encoder_layers=1, num_decoder_layers=2,
              dim_feedforward=FF, dropout=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = nn.Transformer(**kw).double(), tnn.Transformer(**kw).double()
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    theirs.load_state_dict({k: torch.from_numpy(host(v)) for k, v in ours.state_dict().items()})
    src, tgt = RNG.standard_normal((S, N, D)), RNG.standard_normal((L, N, D))
    np.testing.assert_allclose(host(ours(mine(src), mine(tgt))),
                               theirs(theirs_t(src), theirs_t(tgt)).detach().numpy(), atol=1e-9)
    # every matrix Xavier-uniform, as PyTorch's _reset_parameters
    w = host(ours.encoder.layers[0].linear1.weight)
    bound = (6 / (D + FF)) ** 0.5
    assert w.min() >= -bound and w.max() <= bound and w.max() > 0.8 * bound


def test_encoder_stack_causal_detection_and_eval_fast_path_agreement():
    layer_kw = dict(dim_feedforward=FF, dropout=0.0, batch_first=True)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = tnn.TransformerEncoder(tnn.TransformerEncoderLayer(D, H, **layer_kw), 2,
                                        norm=tnn.LayerNorm(D)).double()
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, **layer_kw), 2,
                                 norm=nn.LayerNorm(D), enable_nested_tensor=True).double()
    load_torch_into_ours(theirs, ours)
    x = seq(True, S)
    causal_o = nn.Transformer.generate_square_subsequent_mask(S, dtype=plugrad.float64)
    causal_t = tnn.Transformer.generate_square_subsequent_mask(S, dtype=torch.float64)
    xo, xt = mine(x, grad=True), theirs_t(x, grad=True)
    check(ours, theirs, [ours(xo, mask=causal_o)], [theirs(xt, mask=causal_t)], [(xo, xt)],
          atol=1e-9)
    # eval mode without grad: torch takes its nested-tensor path (zeros at padded positions);
    # the unpadded positions agree
    ours.eval()
    theirs.eval()
    kpm = np.array([[False, False, True, True], [False] * 4])
    with torch.no_grad(), plugrad.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: nested tensors are a prototype
        out_o = host(ours(mine(x), src_key_padding_mask=mine(kpm)))
        out_t = theirs(theirs_t(x), src_key_padding_mask=theirs_t(kpm)).numpy()
    np.testing.assert_allclose(out_o[~kpm], out_t[~kpm], atol=1e-9)


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(4)
    assert m.dtype == plugrad.float32
    np.testing.assert_array_equal(host(m), tnn.Transformer.generate_square_subsequent_mask(4))
    assert nn.Transformer.generate_square_subsequent_mask(2, device="ref").device.type == "ref"
    t = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                       dim_feedforward=4)
    assert tuple(t.generate_square_subsequent_mask(3, dtype=plugrad.float64).shape) == (3, 3)


def test_transformer_errors_like_torch():
    def build(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1,
                                      num_decoder_layers=1, dim_feedforward=4)
    for call in (lambda lib, t: t(lib.randn(3, 2, 4), lib.randn(3, 3, 4)),
                 lambda lib, t: t(lib.randn(3, 2, 4), lib.randn(3, 2, 5)),
                 lambda lib, t: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
                 lambda lib, t: t.encoder.layers[0](lib.randn(3, 2, 4), is_causal=True)):
        ours, theirs = _error(lambda: call(plugrad, build(plugrad))), \
            _error(lambda: call(torch, build(torch)))
        assert ours is not None and ours == theirs, (ours, theirs)
