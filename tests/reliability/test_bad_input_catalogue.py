"""The bad-input catalogue: common misuse, the exception it raises and its exact message.

``CATALOGUE`` is the single source: each case runs on the devices it lists and must raise
exactly that type with exactly that message, and ``docs/errors.md`` must carry the section
rendered from it (regenerate with ``python tests/reliability/test_bad_input_catalogue.py``).
"""
from __future__ import annotations

import pathlib
import sys
from dataclasses import dataclass

import pytest

import plugrad as pg

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "errors.md"
START = "<!-- catalogue:start (generated from tests/reliability/test_bad_input_catalogue.py) -->"
END = "<!-- catalogue:end -->"
BOTH = ("cpu", "ref")


@dataclass(frozen=True)
class Case:
    id: str
    what: str            # the misuse, in words
    code: str            # the offending line, as a user writes it (``d`` is the device)
    error: type
    message: str         # verbatim
    devices: tuple = BOTH

    def run(self, d):
        import plugrad.nn as nn
        import plugrad.nn.functional as F
        import plugrad.optim as optim
        namespace = {"pg": pg, "nn": nn, "F": F, "optim": optim, "d": d}
        exec(compile(self.code, f"<catalogue {self.id}>", "exec"), namespace)


CATALOGUE = [
    # ------------------------------------------------------------------ shapes
    Case("matmul-inner", "matmul with mismatched inner sizes",
         "pg.ones(2, 3, device=d) @ pg.ones(4, 5, device=d)", pg.ShapeError,
         "matmul: shapes cannot be multiplied (2x3 and 4x5): inner sizes 3 and 4 differ "
         "(shapes [2, 3] and [4, 5])"),
    Case("mm-inner", "mm with mismatched inner sizes",
         "pg.mm(pg.ones(2, 3, device=d), pg.ones(4, 5, device=d))", pg.ShapeError,
         "mm: shapes cannot be multiplied (2x3 and 4x5): inner sizes 3 and 4 differ "
         "(shapes [2, 3] and [4, 5])"),
    Case("bmm-batch", "bmm with different batch sizes",
         "pg.bmm(pg.ones(2, 2, 3, device=d), pg.ones(3, 3, 5, device=d))", pg.ShapeError,
         "bmm: batch sizes differ: shapes [2, 2, 3] and [3, 3, 5]"),
    Case("linear-features", "nn.Linear fed the wrong number of features",
         "nn.Linear(3, 2, device=d)(pg.ones(4, 5, device=d))", pg.ShapeError,
         "linear: mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2): input [4, 5], "
         "weight [2, 3] (expected input[..., 3])"),
    Case("broadcast", "elementwise op on shapes that do not broadcast",
         "pg.ones(2, 3, device=d) + pg.ones(4, device=d)", pg.ShapeError,
         "add: shapes [2, 3] and [4] cannot be broadcast together (size 3 vs 4 at dimension -1)"),
    Case("inplace-broadcast", "in-place op whose result would change the tensor's shape",
         "pg.ones(2, device=d).add_(pg.ones(3, 2, device=d))", pg.ShapeError,
         "add_: output with shape [2] doesn't match the broadcast shape [3, 2]"),
    Case("cat-sizes", "cat of tensors differing outside the cat dimension",
         "pg.cat([pg.ones(2, 3, device=d), pg.ones(2, 4, device=d)])", pg.ShapeError,
         "cat: Sizes of tensors must match except in dimension 0. Expected [2, 3] but got "
         "[2, 4] for tensor number 1 in the list"),
    Case("stack-sizes", "stack of tensors of different shapes",
         "pg.stack([pg.ones(2, 3, device=d), pg.ones(3, 2, device=d)])", pg.ShapeError,
         "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at "
         "entry 1"),
    Case("expand", "expand of a non-singleton dimension",
         "pg.ones(2, 3, device=d).expand(4, 4)", pg.ShapeError,
         "expand: the expanded size of the tensor (4) must match the existing size (2) at "
         "non-singleton dimension 0. Target sizes: [4, 4]. Tensor sizes: [2, 3]"),
    Case("reshape", "reshape to a shape of another size",
         "pg.ones(2, 3, device=d).reshape(4, 2)", pg.ShapeError,
         "reshape: shape '[4, 2]' is invalid for input of size 6 (input shape [2, 3])"),
    Case("view", "view to a shape of another size",
         "pg.ones(2, 3, device=d).view(7)", pg.ShapeError,
         "view: shape '[7]' is invalid for input of size 6 (input shape [2, 3])"),
    Case("permute-repeat", "permute with a repeated dimension",
         "pg.ones(2, 3, device=d).permute(0, 0)", pg.ShapeError,
         "permute: repeated dim in [0, 0]"),
    Case("setitem-shape", "assigning a value that does not fit the indexed region",
         "t = pg.ones(2, 3, device=d)\nt[0] = pg.ones(4, device=d)", pg.ShapeError,
         "setitem: shape mismatch: value tensor of shape [4] cannot be broadcast to indexing "
         "result of shape [3]"),
    Case("conv-channels", "Conv2d fed the wrong number of channels",
         "nn.Conv2d(3, 4, 3, device=d)(pg.ones(1, 2, 5, 5, device=d))", pg.ShapeError,
         "conv2d: Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, 5, 5] to "
         "have 3 channels, but got 2 channels instead"),
    Case("negative-size", "a factory given a negative size",
         "pg.zeros(-1, device=d)", pg.ArgumentError,
         "zeros(): negative dimension in size [-1] (sizes must be non-negative)"),
    Case("arange-step", "arange with a zero step (PyTorch's RuntimeError)",
         "pg.arange(0, 5, 0, device=d)", pg.ArgumentError, "arange: step must be nonzero"),
    Case("randint-range", "randint with low >= high (PyTorch's RuntimeError)",
         "pg.randint(5, 2, (3,), device=d)", pg.ArgumentError,
         "randint: expected low < high, got low=5, high=2"),
    Case("split-zero", "split into pieces of size 0 (PyTorch's RuntimeError)",
         "pg.ones(4, device=d).split(0)", pg.ArgumentError,
         "split: split_size must be positive, got 0"),
    Case("mse-shape", "mse_loss of shapes that do not broadcast (PyTorch's RuntimeError)",
         "nn.functional.mse_loss(pg.ones(2, 3, device=d), pg.ones(4, 3, device=d))",
         pg.ShapeError,
         "mse_loss: target size [4, 3] and input size [2, 3] cannot be broadcast together"),
    Case("multinomial-negative", "multinomial of a negative probability",
         "pg.multinomial(pg.tensor([-1.0, 2.0], device=d), 1)", RuntimeError,
         "multinomial: probability tensor contains either `inf`, `nan` or element < 0"),
    Case("bernoulli-range", "bernoulli of a probability above 1",
         "pg.bernoulli(pg.tensor([1.5], device=d))", RuntimeError,
         "bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but got false (a probability "
         "is above 1)"),
    Case("randperm-negative", "randperm of a negative count",
         "pg.randperm(-1, device=d)", pg.ArgumentError,
         "randperm: Trying to create tensor with negative dimension -1: [-1]"),
    Case("full-string", "full with a string fill value",
         "pg.full((2,), 'a', device=d)", TypeError,
         "full(): argument 'fill_value' (position 2) must be Number, not str"),
    # ------------------------------------------------------------------ dims and indexing
    Case("dim-range", "reduction over a dimension that does not exist",
         "pg.ones(2, 3, device=d).sum(5)", IndexError,
         "sum: Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    Case("index-range", "integer index past the end of a dimension",
         "pg.ones(2, 3, device=d)[0, 5]", IndexError,
         "index 5 is out of bounds for dimension 1 with size 3"),
    Case("index-tensor-range", "index tensor with an entry past the end",
         "pg.ones(2, 3, device=d)[pg.tensor([0, 7], device=d)]", pg.IndexOutOfRangeError,
         "index: index 7 is out of bounds for dimension 0 with size 2"),
    Case("too-many-indices", "more indices than dimensions",
         "pg.ones(2, 3, device=d)[0, 0, 0]", IndexError,
         "too many indices for tensor of dimension 2"),
    Case("gather-range", "gather with an index past the end (RuntimeError in PyTorch too)",
         "pg.ones(2, 3, device=d).gather(1, pg.tensor([[5], [0]], device=d))",
         pg.IndexOutOfRangeError,
         "gather: index 5 is out of bounds for dimension 1 with size 3"),
    # ------------------------------------------------------------------ dtypes
    Case("matmul-dtypes", "matmul of an integer and a float tensor",
         "pg.ones(2, 2, dtype=pg.int64, device=d) @ pg.ones(2, 2, device=d)", pg.DTypeError,
         "matmul: expected both operands to have the same dtype, but got int64[2, 2] and "
         "float32[2, 2]"),
    Case("bool-sub", "subtracting bool tensors",
         "pg.ones(2, dtype=pg.bool, device=d) - pg.ones(2, dtype=pg.bool, device=d)",
         pg.DTypeError,
         "sub: Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
         "trying to invert a mask, use the `~` or `logical_not()` operator instead."),
    Case("inplace-downcast", "in-place op whose float result cannot go into an int tensor",
         "pg.ones(2, dtype=pg.int64, device=d).add_(pg.ones(2, device=d) * 0.5)",
         pg.DTypeError, "add_: result type float32 can't be cast to the desired output type "
                        "int64"),
    Case("int-negative-power", "integer raised to a negative integer power",
         "pg.tensor([2], device=d) ** -1", pg.DTypeError,
         "pow: Integers to negative integer powers are not allowed."),
    Case("backend-dtype", "a dtype the backend does not support",
         "pg.ones(2, dtype=pg.bfloat16, device=d)", pg.DTypeError,
         "ones: dtype plugrad.bfloat16 is not supported by backend 'reference' (device type "
         "'ref'); it supports bool, float16, float32, float64, int16, int32, int64, int8, "
         "uint8", ("ref",)),
    Case("unknown-dtype", "an unknown dtype name",
         "pg.ones(2, dtype='float128', device=d)", TypeError,
         "unknown dtype 'float128'; expected one of bool, uint8, int8, int16, int32, int64, "
         "float16, bfloat16, float32, float64"),
    Case("int-floordiv-zero", "integer floor division by zero",
         "pg.tensor([1, 2], device=d) // pg.tensor([0, 1], device=d)", ZeroDivisionError,
         "floor_divide: integer division by zero"),
    Case("int-remainder-zero", "integer remainder by zero",
         "pg.tensor([1, 2], device=d) % 0", ZeroDivisionError,
         "remainder: integer division by zero"),
    # ------------------------------------------------------------------ devices
    Case("device-mismatch", "an op mixing devices",
         "pg.ones(2, device='cpu') + pg.ones(2, device='ref')", pg.DeviceError,
         "add: Expected all tensors to be on the same device, but found at least two devices, "
         "cpu and ref!", ("cpu",)),
    Case("device-mismatch-matmul", "matmul mixing devices",
         "pg.ones(2, 2, device='ref') @ pg.ones(2, 2, device='cpu')", pg.DeviceError,
         "matmul: Expected all tensors to be on the same device, but found at least two "
         "devices, ref and cpu!", ("ref",)),
    # ------------------------------------------------------------------ losses
    Case("ce-target-range", "cross-entropy target class out of range",
         "F.cross_entropy(pg.zeros(2, 3, device=d), pg.tensor([0, 3], device=d))", IndexError,
         "Target 3 is out of bounds."),
    Case("nll-negative-target", "nll_loss target class negative",
         "F.nll_loss(pg.zeros(2, 3, device=d), pg.tensor([0, -5], device=d))", IndexError,
         "Target -5 is out of bounds."),
    Case("ce-float-target", "cross-entropy given float class indices",
         "F.cross_entropy(pg.zeros(2, 3, device=d), pg.tensor([0.0, 1.0], device=d))",
         pg.DTypeError,
         "cross_entropy: expected target of integer class indices (int64) with shape [2], got "
         "plugrad.float32 with shape [2]. For class probabilities the target must be floating "
         "and have the input's shape [2, 3]."),
    Case("ce-batch", "cross-entropy target batch size differs from the input's",
         "F.cross_entropy(pg.zeros(2, 3, device=d), pg.tensor([0, 1, 2], device=d))",
         ValueError, "Expected input batch_size (2) to match target batch_size (3)."),
    Case("bce-range", "binary cross-entropy on inputs outside [0, 1]",
         "F.binary_cross_entropy(pg.tensor([1.5], device=d), pg.tensor([1.0], device=d))",
         RuntimeError, "all elements of input should be between 0 and 1"),
    # ------------------------------------------------------------------ modules, optimizers
    Case("load-state-dict", "load_state_dict with missing, unexpected and mis-shaped keys",
         "m = nn.Linear(3, 2, device=d)\n"
         "m.load_state_dict({'weight': pg.zeros(5, 5, device=d), 'extra': pg.zeros(1, device=d)})",
         RuntimeError,
         "Error(s) in loading state_dict for Linear:\n"
         "\tMissing key(s) in state_dict: \"bias\". \n"
         "\tUnexpected key(s) in state_dict: \"extra\". \n"
         "\tsize mismatch for weight: copying a param with shape plugrad.Size([5, 5]) from "
         "checkpoint, the shape in current model is plugrad.Size([2, 3])."),
    Case("sgd-negative-lr", "an optimizer with a negative learning rate",
         "optim.SGD(nn.Linear(3, 2, device=d).parameters(), lr=-1)", ValueError,
         "Invalid learning rate: -1"),
    Case("optim-empty", "an optimizer given no parameters",
         "optim.SGD([], lr=0.1)", ValueError, "optimizer got an empty parameter list"),
    Case("optim-non-leaf", "an optimizer given a computed (non-leaf) tensor",
         "optim.SGD([pg.ones(2, device=d, requires_grad=True) * 2], lr=0.1)", ValueError,
         "can't optimize a non-leaf Tensor"),
    Case("optim-tensor", "an optimizer given a tensor instead of an iterable",
         "optim.SGD(pg.ones(2, device=d, requires_grad=True), lr=0.1)", TypeError,
         "params argument given to the optimizer should be an iterable of Tensors or dicts, "
         "but got plugrad.float32 Tensor"),
    Case("adam-betas", "Adam with a beta outside [0, 1)",
         "optim.Adam(nn.Linear(3, 2, device=d).parameters(), betas=(1.5, 0.9))", ValueError,
         "Invalid beta parameter at index 0: 1.5"),
    # ------------------------------------------------------------------ autograd
    Case("requires-grad-int", "requires_grad on an integer tensor",
         "pg.tensor([1, 2], device=d, requires_grad=True)", RuntimeError,
         "only Tensors of floating point dtype can require gradients (got plugrad.int64)"),
    Case("backward-non-scalar", "backward() on a non-scalar without gradient=",
         "(pg.ones(2, device=d, requires_grad=True) * 2).backward()", RuntimeError,
         "grad can be implicitly created only for scalar outputs: backward was called on a "
         "tensor of shape [2]; pass gradient= (a tensor of that shape) or reduce the output to "
         "a scalar first, e.g. with .sum()"),
    Case("backward-no-grad", "backward() on a tensor outside any graph",
         "pg.ones(2, device=d).sum().backward()", RuntimeError,
         "element 0 of tensors does not require grad and does not have a grad_fn"),
    Case("gradient-shape", "backward(gradient) with the wrong shape",
         "(pg.ones(3, device=d, requires_grad=True) * 2).backward(pg.ones(4, device=d))",
         RuntimeError, "Mismatch in shape: grad_output[0] has a shape of [4] and output[0] has "
                       "a shape of [3]."),
    Case("inplace-leaf", "in-place op on a leaf that requires grad",
         "pg.ones(2, device=d, requires_grad=True).mul_(2)", RuntimeError,
         "mul_: a leaf Variable that requires grad is being used in an in-place operation."),
    Case("inplace-leaf-view", "in-place op on a view of a leaf that requires grad",
         "pg.ones(2, 2, device=d, requires_grad=True)[0].zero_()", RuntimeError,
         "zero_: a view of a leaf Variable that requires grad is being used in an in-place "
         "operation."),
    Case("backward-twice", "a second backward through a freed graph",
         "y = (pg.ones(2, device=d, requires_grad=True) * 3).sum()\ny.backward()\ny.backward()",
         RuntimeError,
         "Trying to backward through the graph a second time (or directly access saved tensors "
         "after they have already been freed) in MulBackward0. Saved intermediate values of "
         "the graph are freed when you call .backward() or autograd.grad(). Specify "
         "retain_graph=True if you need to backward through the graph a second time or if you "
         "need to access saved tensors after calling backward."),
    Case("saved-modified", "in-place change of a tensor saved for backward",
         "a = pg.ones(3, device=d, requires_grad=True)\nb = a * 2\nc = b.sin()\nb.add_(1)\n"
         "c.sum().backward()", RuntimeError,
         "one of the variables needed for gradient computation has been modified by an inplace "
         "operation: [float32 tensor of shape [3]] is at version 1; expected version 0 "
         "instead. It was saved by SinBackward0. Hint: enable anomaly detection with "
         "plugrad.autograd.set_detect_anomaly(True) to see where the operation that saved it "
         "ran in forward."),
    Case("numpy-requires-grad", "numpy() of a tensor that requires grad",
         "pg.ones(3, requires_grad=True).numpy()", RuntimeError,
         "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
         "instead.", ("cpu",)),
    # ------------------------------------------------------------------ conversions
    Case("item-many", "item() of a tensor with several elements",
         "pg.ones(3, device=d).item()", RuntimeError,
         "a Tensor with 3 elements cannot be converted to Scalar"),
    Case("bool-ambiguous", "truth value of a tensor with several elements",
         "bool(pg.ones(3, device=d))", RuntimeError,
         "Boolean value of Tensor with 3 values is ambiguous"),
]

PARAMS = [pytest.param(case, d, id=f"{case.id}-{d}") for case in CATALOGUE for d in case.devices]


def test_catalogue_is_large_and_unique():
    assert len(CATALOGUE) >= 25
    assert len({c.id for c in CATALOGUE}) == len(CATALOGUE)


@pytest.mark.parametrize("case, d", PARAMS)
def test_misuse_raises_documented_error(case, d):
    with pytest.raises(case.error) as info:
        case.run(d)
    assert type(info.value) is case.error  # exactly, not a subclass or a wrapper
    assert str(info.value) == case.message


def render() -> str:
    """The catalogue section of docs/errors.md."""
    lines = [START, "", "| # | Misuse | Exception |", "|---|---|---|"]
    for i, c in enumerate(CATALOGUE, 1):
        lines.append(f"| {i} | [{c.what}](#{c.id}) | `{c.error.__name__}` |")
    lines.append("")
    for i, c in enumerate(CATALOGUE, 1):
        where = "every backend" if c.devices == BOTH else ", ".join(c.devices)
        lines += [f"<a id=\"{c.id}\"></a>", f"#### {i}. {c.what} (`{c.id}`, {where})", "",
                  "```python", c.code.replace("device=d", f"device={c.devices[0]!r}"), "```", "",
                  f"raises `{c.error.__name__}`:", "", "```text", c.message, "```", ""]
    lines.append(END)
    return "\n".join(lines)


def test_docs_list_every_message_verbatim():
    text = DOC.read_text()
    assert START in text and END in text, f"{DOC} lacks the generated catalogue section"
    section = text[text.index(START):text.index(END) + len(END)]
    assert section == render(), ("docs/errors.md is out of date: run "
                                 "`python tests/reliability/test_bad_input_catalogue.py`")
    for c in CATALOGUE:
        assert c.message in text


def write_docs() -> None:
    text = DOC.read_text()
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    DOC.write_text(head + render() + tail)


if __name__ == "__main__":
    write_docs()
    print(f"wrote the catalogue ({len(CATALOGUE)} cases) into {DOC}", file=sys.stderr)
