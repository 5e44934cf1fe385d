"""Every module's ``forward`` takes PyTorch's parameter names.

Programs call modules by keyword (``model(input=x)``, ``layer(input1=a, input2=b)``), and
forward pre-hooks registered ``with_kwargs=True`` see those names; a module whose forward
names its input ``x`` where PyTorch's says ``input`` breaks such a call with a TypeError.
"""
import inspect

import pytest

import plugrad
import plugrad.nn as nn

torch = pytest.importorskip("torch", reason="PyTorch is the reference for the names")

#: PyTorch's abstract bases and containers with no forward of their own (``*input`` there).
NO_FORWARD = {"Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
              "RNNBase", "RNNCellBase", "Container"}


def _pairs():
    for name in sorted(dir(torch.nn)):
        ours, theirs = getattr(nn, name, None), getattr(torch.nn, name)
        if (inspect.isclass(theirs) and issubclass(theirs, torch.nn.Module)
                and ours is not None and name not in NO_FORWARD):
            yield name, ours, theirs


PAIRS = list(_pairs())


def test_modules_are_compared():
    assert len(PAIRS) > 100  # the comparison is not vacuous


@pytest.mark.parametrize("name,ours,theirs", PAIRS, ids=[p[0] for p in PAIRS])
def test_forward_parameter_names(name, ours, theirs):
    want = list(inspect.signature(theirs.forward).parameters)
    got = list(inspect.signature(ours.forward).parameters)
    assert got == want, f"nn.{name}.forward{tuple(got[1:])}: PyTorch's is {tuple(want[1:])}"


def test_called_by_keyword():
    plugrad.manual_seed(0)
    x = plugrad.randn(2, 3)
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    assert plugrad.equal(seq(input=x), seq(x))
    bil = nn.Bilinear(3, 3, 2)
    assert plugrad.equal(bil(input1=x, input2=x), bil(x, x))
