"""The op database's entries for the layers of issue 15: more activations, group /
instance / RMS / local-response norms, embedding bags, margin and likelihood losses, and
the distances (``plugrad.cdist``, ``plugrad.pdist``, ``plugrad.cosine_similarity``,
``plugrad.pairwise_distance``, also spelled ``nn.functional.*``).

Each gets what every entry gets: forward against the reference backend in every tested
dtype, float64 ``gradcheck`` and the bit-equality of its two backward bindings. Samples
keep off the kinks (finite differences straddle them); tests/nn/*_vs_torch.py checks the
gradients at the kinks against PyTorch. Samples stay tiny: the reference backend is pure
Python.
"""
from __future__ import annotations

from plugrad.testing._opdb_nn import _F, _activation
from plugrad.testing.opdb import ALL, FLOATS, INTS, S, _add, _P

#: names that are not entries of their own, and why
NOT_OPS_LAYERS = {
    **{f"nn.functional.{n}": "random: tests/nn/test_bags_dropout_distance_vs_torch.py checks "
                             "the masks, their statistics and the eval identity"
       for n in ("dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                 "feature_alpha_dropout")},
    **{f"nn.functional.{n}_": f"the in-place form of nn.functional.{n} (inplace=True of its "
                              f"entry; tests/nn/test_activations_vs_torch.py)"
       for n in ("selu", "celu", "rrelu", "threshold", "elu", "hardtanh", "leaky_relu")},
    **{f"nn.functional.{n}": f"the same function as plugrad.{n} (its entry)"
       for n in ("cosine_similarity", "pairwise_distance", "pdist")},
}


def _kinkless(low, high, avoid):
    """Activation samples whose values stay 0.05 or more away from the ``avoid`` points."""
    base = _activation(low=low, high=high)

    def gen(make, dtype):
        for s in base(make, dtype):
            x = s.args[0]
            for a in avoid if x.dtype.is_floating_point else ():
                near = (x - a).abs() < 0.05
                x = x + near.to(x.dtype) * 0.1
            yield S((x,) + s.args[1:], s.kwargs, name=s.name, method=False)
    return gen


def _with_kwargs(gen, **kw):
    def out(make, dtype):
        for s in gen(make, dtype):
            yield S(s.args, {**s.kwargs, **kw}, name=s.name + f" {kw}", method=False)
    return out


# ---------------------------------------------------------------------- activations
def s_prelu(make, dtype):
    yield S((make(2, 3, 2, nonzero=True), make(3, low=0.1, high=0.5)), name="per channel",
            method=False)
    yield S((make(4, nonzero=True), make(1, low=0.1, high=0.5)), name="one weight",
            method=False)


def s_softmin(make, dtype):
    yield S((make(2, 3),), {"dim": 1}, name="dim 1", method=False)
    yield S((make(3, 2),), {"dim": 0}, name="dim 0", method=False)


# ---------------------------------------------------------------------- norms
def s_group_norm(make, dtype):
    yield S((make(2, 4, 3), 2, make(4), make(4)), name="affine", method=False)
    yield S((make(2, 3, 2, 2), 3), {"eps": 1e-2}, name="one channel per group", method=False)


def s_instance_norm(make, dtype):
    yield S((make(2, 3, 4),), name="input stats", method=False)
    yield S((make(1, 2, 2, 3), None, None, make(2), make(2)), name="affine 2-d",
            method=False)
    yield S((make(2, 2, 3), make(2, low=-0.5, high=0.5), make(2, low=0.5, high=2)),
            {"use_input_stats": False}, name="running stats", method=False)


def s_rms_norm(make, dtype):
    yield S((make(2, 3), (3,), make(3)), name="weight", method=False)
    yield S((make(2, 2, 3), (2, 3)), {"eps": 1e-3}, name="two dims", method=False)


def s_lrn(make, dtype):
    yield S((make(2, 4, 3), 3), name="3-d", method=False)
    yield S((make(1, 3, 2, 2), 2), {"alpha": 0.5, "beta": 0.5, "k": 2.0}, name="4-d",
            method=False)


# ---------------------------------------------------------------------- bags
def s_embedding_bag(make, dtype):
    yield S((make.index((2, 3), 5), make(5, 2)), name="2-d mean", method=False)
    yield S((make.index((5,), 5), make(5, 2), make.index((1,), 1)), {"mode": "sum"},
            name="offsets sum", method=False)
    yield S((make.index((3, 2), 4, unique_axis=1), make(4, 2)), {"mode": "max"},
            name="max", method=False)


# ---------------------------------------------------------------------- losses
def _signs(make, *shape):
    s = make(*shape)
    return (s > 0).to(s.dtype) * 2 - 1


def s_poisson(make, dtype):
    yield S((make(2, 3), make(2, 3, low=0, high=3)), name="log input", method=False)
    yield S((make(2, 3, low=0.5, high=2), make(2, 3, low=1.5, high=3)),
            {"log_input": False, "full": True, "reduction": "sum"}, name="full", method=False)


def s_gaussian(make, dtype):
    yield S((make(2, 3), make(2, 3), make(2, 3, low=0.5, high=2)), name="mean", method=False)
    yield S((make(2, 3), make(2, 3), make(2, low=0.5, high=2)), {"reduction": "none"},
            name="one var per row", method=False)


def s_margin_ranking(make, dtype):
    yield S((make(4), make(4), _signs(make, 4)), {"margin": 5.0}, name="mean", method=False)


def s_hinge(make, dtype):
    yield S((make(2, 3, low=-3, high=-1.5), _signs(make, 2, 3)), {"reduction": "sum"},
            name="sum", method=False)


def s_soft_margin(make, dtype):
    yield S((make(2, 3), _signs(make, 2, 3)), name="mean", method=False)


def s_cosine_embedding(make, dtype):
    yield S((make(3, 4), make(3, 4), _signs(make, 3)), {"margin": -1.0}, name="batch",
            method=False)


def s_triplet(make, dtype):
    yield S((make(3, 4), make(3, 4), make(3, 4)), {"margin": 10.0}, name="p=2", method=False)
    yield S((make(3, 4), make(3, 4), make(3, 4)), {"margin": 10.0, "p": 1.0, "swap": True},
            name="p=1 swap", method=False)


def s_triplet_distance(make, dtype):
    yield S((make(3, 4), make(3, 4), make(3, 4)), {"margin": 10.0}, name="default distance",
            method=False)


def s_multi_margin(make, dtype):
    yield S((make(3, 4, low=-0.2, high=0.2), make.index((3,), 4)), name="p=1", method=False)
    yield S((make(3, 4, low=-0.2, high=0.2), make.index((3,), 4)),
            {"p": 2, "margin": 2.0, "reduction": "none"}, name="p=2", method=False)


def s_multilabel_margin(make, dtype):
    import plugrad
    t = plugrad.tensor([[3, 0, -1, 1], [1, -1, 2, 2]], device=make.device)
    yield S((make(2, 4, low=-0.2, high=0.2), t), name="targets", method=False)


def s_multilabel_soft(make, dtype):
    yield S((make(2, 3), make(2, 3, low=0, high=1)), name="mean", method=False)


# ---------------------------------------------------------------------- distances
def s_cosine_similarity(make, dtype):
    yield S((make(3, 4, nonzero=True), make(3, 4, nonzero=True)), name="rows", method=False)
    yield S((make(2, 3, nonzero=True), make(3, nonzero=True)), {"dim": -1},
            name="broadcast", method=False)


def s_pairwise_distance(make, dtype):
    yield S((make(3, 4), make(3, 4)), name="p=2", method=False)
    yield S((make(3, 4), make(4)), {"p": 3.0, "keepdim": True}, name="p=3 broadcast",
            method=False)


def s_pdist(make, dtype):
    yield S((make(4, 3),), name="p=2", method=False)
    yield S((make(3, 2),), {"p": 1.5}, name="p=1.5", method=False)


def s_cdist(make, dtype):
    yield S((make(3, 2), make(4, 2)), name="p=2", method=False)
    yield S((make(2, 3, 2), make(2, 2, 2)), {"p": 3.0}, name="batched p=3", method=False)
    yield S((make(3, 2), make(2, 2)), {"p": 2.0, "compute_mode": "use_mm_for_euclid_dist"},
            name="matrix product", method=False)


_add(
    _F("selu", _activation()),
    _F("celu", _kinkless(-2, 2, [0.0])),
    _F("hardswish", _kinkless(-4, 4, [-3.0, 3.0])),
    _F("hardsigmoid", _kinkless(-4, 4, [-3.0, 3.0])),
    _F("hardshrink", _with_kwargs(_kinkless(-2, 2, [-0.5, 0.5]), lambd=0.5)),
    _F("softshrink", _with_kwargs(_kinkless(-2, 2, [-0.5, 0.5]), lambd=0.5)),
    _F("tanhshrink", _activation(), dtypes=FLOATS + INTS),
    _F("threshold", _with_kwargs(_kinkless(-2, 2, [0.25]), threshold=0.25, value=-1.0),
       dtypes=FLOATS + INTS),
    _F("rrelu", _kinkless(-2, 2, [0.0])),
    _F("prelu", s_prelu),
    _F("softmin", s_softmin),
    _F("group_norm", s_group_norm),
    _F("instance_norm", s_instance_norm),
    _F("rms_norm", s_rms_norm),
    _F("local_response_norm", s_lrn, dtypes=FLOATS + ("int64",)),  # its int64 avg pool
    _F("embedding_bag", s_embedding_bag),
    _F("poisson_nll_loss", s_poisson, dtypes=FLOATS + INTS),
    _F("gaussian_nll_loss", s_gaussian),
    _F("margin_ranking_loss", s_margin_ranking, dtypes=FLOATS + INTS),
    _F("hinge_embedding_loss", s_hinge, dtypes=FLOATS + INTS),
    _F("soft_margin_loss", s_soft_margin),
    _F("cosine_embedding_loss", s_cosine_embedding, dtypes=ALL),
    _F("triplet_margin_loss", s_triplet, dtypes=FLOATS + INTS),
    _F("triplet_margin_with_distance_loss", s_triplet_distance, dtypes=FLOATS + INTS),
    _F("multi_margin_loss", s_multi_margin),
    _F("multilabel_margin_loss", s_multilabel_margin),
    _F("multilabel_soft_margin_loss", s_multilabel_soft),
    _P("cosine_similarity", sample_inputs=s_cosine_similarity, dtypes=FLOATS,
       differentiable=True),
    _P("pairwise_distance", sample_inputs=s_pairwise_distance, dtypes=FLOATS + INTS,
       differentiable=True),
    _P("pdist", sample_inputs=s_pdist, dtypes=FLOATS, differentiable=True),
    _P("cdist", sample_inputs=s_cdist, dtypes=FLOATS, differentiable=True),
)
