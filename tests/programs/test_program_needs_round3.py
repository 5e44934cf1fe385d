"""What the third round of public programs needed (docs/programs.md: MorvanZhou's
tutorial, minGPT, char-rnn, the PyTorch NLP tutorials), compared with PyTorch."""
import numpy as np
import pytest
import torch

import plugrad

DEVICES = ["cpu", "ref"]


def _raises_like_torch(pg_call, torch_call):
    """Both raise; plugrad's error is of PyTorch's type with PyTorch's words in it."""
    with pytest.raises(Exception) as want:
        torch_call()
    with pytest.raises(type(want.value)) as got:
        pg_call()
    return str(want.value), str(got.value)


@pytest.mark.parametrize("device", DEVICES)
def test_cat_of_zero_dim_tensors_is_refused_like_pytorch(device):
    """The BiLSTM-CRF tutorial's old ``torch.cat`` of 0-d scores: PyTorch refuses it with a
    RuntimeError naming the position (plugrad's backend used to fail in NumPy)."""
    v = [plugrad.tensor(1.0, device=device), plugrad.tensor([2.0], device=device)]
    w = [torch.tensor(1.0), torch.tensor([2.0])]
    for order in ([0, 1], [1, 0]):
        want, got = _raises_like_torch(lambda: plugrad.cat([v[i] for i in order]),
                                       lambda: torch.cat([w[i] for i in order]))
        assert want in got, (want, got)
    # after .view(1) (the tutorial's fix) both join
    out = plugrad.cat([t.view(1) for t in v])
    np.testing.assert_array_equal(out.cpu().numpy(), torch.cat([t.view(1) for t in w]).numpy())
