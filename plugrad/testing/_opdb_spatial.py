"""The op database's entries for the spatial ``nn.functional`` ops: transposed
convolutions, resampling, the 1-D/Lp/adaptive pools, pixel shuffles.

Checked like every public op (forward against the reference backend in every tested dtype,
float64 ``gradcheck``, the bit-equality of the two backward bindings, which reaches
``conv2d``/``conv2d_grad_weight`` through the transposed convolution's one rule). The pad
modes are added to the samples of the ``nn.functional.pad`` entry (``_opdb_nn``). Samples stay tiny:
the reference backend is pure Python.
"""
from __future__ import annotations

import dataclasses

import plugrad.nn.functional as F
from plugrad.testing.opdb import ALL, FLOATS, INTS, OP_DB, OpInfo, SampleInput as S, _add


def _F(name, sample_inputs, **kw) -> OpInfo:
    kw.setdefault("dtypes", FLOATS)
    kw.setdefault("differentiable", True)
    return OpInfo(f"nn.functional.{name}", getattr(F, name), sample_inputs, kind="public",
                  **kw)


def s_pad_modes(make, dtype):
    """Reflect/replicate/circular samples (PyTorch pads bool tensors circularly only)."""
    if dtype != "bool":
        yield S((make(1, 2, 4), (2, 1)), {"mode": "reflect"}, name="reflect 1-d",
                method=False)
        yield S((make(2, 3, 3), (1, 2, 0, 1)), {"mode": "replicate"}, name="replicate 2-d",
                method=False)
    yield S((make(1, 1, 2, 2, 3), (1, 0, 1, 1, 0, 2)), {"mode": "circular"},
            name="circular 3-d", method=False)
    yield S((make(1, 2, 5), (-1, 2)), {"mode": "circular"}, name="circular, crop",
            method=False)


def s_conv_transpose1d(make, dtype):
    yield S((make(1, 2, 4), make(2, 3, 2), make(3)), name="bias", method=False)
    yield S((make(2, 4, 3), make(4, 1, 3)), {"stride": 2, "padding": 1, "output_padding": 1,
                                             "groups": 2}, name="stride, groups",
            method=False)


def s_conv_transpose2d(make, dtype):
    yield S((make(1, 2, 3, 3), make(2, 3, 2, 2), make(3)), name="bias", method=False)
    yield S((make(1, 2, 2, 3), make(2, 1, 3, 2)), {"stride": (2, 1), "padding": (1, 0),
                                                   "output_padding": (1, 0), "groups": 2,
                                                   "dilation": (1, 2)},
            name="stride, padding, groups, dilation", method=False)
    yield S((make(2, 2, 2), make(2, 1, 2, 2)), {"dilation": 2, "output_padding": 1},
            name="unbatched, output padding >= stride", method=False)


def s_interpolate(make, dtype):
    yield S((make(1, 2, 3),), {"scale_factor": 2}, name="nearest 1-d", method=False)
    yield S((make(1, 1, 2, 3),), {"size": (3, 5), "mode": "nearest-exact"},
            name="nearest-exact 2-d", method=False)
    yield S((make(1, 2, 4),), {"size": 6, "mode": "linear"}, name="linear", method=False)
    yield S((make(1, 1, 3, 3),), {"scale_factor": 1.5, "mode": "bilinear",
                                  "align_corners": True}, name="bilinear, corners",
            method=False)
    yield S((make(1, 1, 3, 3),), {"size": (4, 5), "mode": "bicubic"}, name="bicubic",
            method=False)
    yield S((make(1, 1, 2, 2, 2),), {"scale_factor": (1.5, 1, 2), "mode": "trilinear"},
            name="trilinear", method=False)
    yield S((make(1, 2, 5),), {"size": 3, "mode": "area"}, name="area", method=False)


def s_upsample(make, dtype):
    yield S((make(1, 2, 3),), {"scale_factor": 2}, name="nearest", method=False)
    yield S((make(1, 1, 2, 3),), {"size": (3, 4), "mode": "bilinear"}, name="bilinear",
            method=False)


def s_upsample_2d(make, dtype):
    yield S((make(1, 1, 2, 3),), {"scale_factor": 2}, name="scale", method=False)
    yield S((make(1, 2, 2, 2),), {"size": (3, 4)}, name="size", method=False)


def _pool1d(*kwargs_list, positive=False, floats_only=()):
    """``floats_only``: samples left out for other dtypes (max_pool1d with return_indices
    takes integers, as PyTorch's max_pool1d_with_indices, while plain max_pool1d refuses
    them: the integer indices are max_pool1d_with_indices' entry's)."""
    def gen(make, dtype):
        low = 0.2 if positive else -2.0
        for i, kw in enumerate(kwargs_list):
            if i in floats_only and dtype not in FLOATS:
                continue
            shape = (2, 7) if i == 1 else (1, 2, 7)
            yield S((make(*shape, low=low, high=2.0),), dict(kw), name=f"{kw} {shape}",
                    method=False)
    return gen


def s_lp_pool2d(make, dtype):
    yield S((make(1, 2, 4, 4, low=0.2, high=2.0), 2.0, 2), name="p=2", method=False)
    yield S((make(1, 3, 5, low=0.2, high=2.0), 3.0, (2, 3)), {"stride": 1, "ceil_mode": True},
            name="p=3, unbatched, ceil", method=False)


def s_adaptive_max_pool2d(make, dtype):
    yield S((make(1, 2, 5, 4),), {"output_size": (2, 3)}, name="overlapping", method=False)
    yield S((make(2, 4, 4),), {"output_size": 2, "return_indices": True},
            name="even, indices", method=False)


def s_pixel_shuffle(make, dtype):
    yield S((make(1, 8, 2, 3), 2), name="r=2", method=False)
    yield S((make(9, 1, 2), 3), name="unbatched r=3", method=False)


def s_pixel_unshuffle(make, dtype):
    yield S((make(1, 2, 4, 6), 2), name="r=2", method=False)
    yield S((make(2, 1, 3, 3, 3), 3), name="two batch dims", method=False)


_add(
    _F("conv_transpose1d", s_conv_transpose1d, dtypes=FLOATS + ("int64",)),
    _F("conv_transpose2d", s_conv_transpose2d, dtypes=FLOATS + ("int64",)),
    _F("interpolate", s_interpolate),
    _F("upsample", s_upsample),
    _F("upsample_nearest", s_upsample_2d),
    _F("upsample_bilinear", s_upsample_2d),
    _F("max_pool1d", _pool1d({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                             {"kernel_size": 3, "stride": 2, "ceil_mode": True,
                              "return_indices": True}, floats_only=(2,))),
    _F("avg_pool1d", _pool1d({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                             {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                              "count_include_pad": False}), dtypes=FLOATS + ("int64",)),
    _F("lp_pool1d", _pool1d({"norm_type": 2.0, "kernel_size": 2},
                            {"norm_type": 3.0, "kernel_size": 3, "stride": 2},
                            positive=True), dtypes=ALL),  # x^p: float (bool too, as PyTorch)
    _F("lp_pool2d", s_lp_pool2d, dtypes=ALL),
    _F("adaptive_avg_pool1d", _pool1d({"output_size": 3}, {"output_size": 4})),
    _F("adaptive_max_pool1d", _pool1d({"output_size": 3}, {"output_size": 2},
                                      {"output_size": 4, "return_indices": True})),
    _F("adaptive_max_pool2d", s_adaptive_max_pool2d),
    _F("pixel_shuffle", s_pixel_shuffle, dtypes=ALL),
    _F("pixel_unshuffle", s_pixel_unshuffle, dtypes=ALL),
)


def _add_pad_modes() -> None:
    """The pad entry's samples, then the non-constant modes'."""
    for i, o in enumerate(OP_DB):
        if o.name == "nn.functional.pad":
            def samples(make, dtype, base=o.sample_inputs):
                yield from base(make, dtype)
                yield from s_pad_modes(make, dtype)
            OP_DB[i] = dataclasses.replace(o, sample_inputs=samples)


_add_pad_modes()
