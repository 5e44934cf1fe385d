"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``.

A :class:`PackedSequence` stores a batch of sequences time step by time step, longest first:
``data`` holds, for each step ``t``, the ``batch_sizes[t]`` sequences still running. Every
function here moves the rows with one ``index_select`` (whose gradient is one scatter-add)
rather than a loop of slices, so packing and padding cost two nodes whatever the batch.
"""
from __future__ import annotations

from typing import NamedTuple

import plugrad
from plugrad import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    perm = permutation.tolist()
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return plugrad.tensor(inverse, dtype=plugrad.long, device=permutation.device)


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``; build it with
    :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand.

    ``batch_sizes`` always lives on the CPU (it steers the loop over time steps); the
    index tensors live with ``data``. ``sorted_indices[j]`` is the original batch position
    of packed column ``j``; ``unsorted_indices`` is its inverse."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PyTorch's legacy form: PackedSequence((data, batch_sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError("PackedSequence: expected data and batch_sizes, or a "
                                "(data, batch_sizes) pair")
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated "
                             "by functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html"
                             "#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data.to(...)``; the index tensors follow ``data``'s device, ``batch_sizes``
        stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to(device if device is not None else "cuda")

    def double(self):
        return self.to(dtype=plugrad.float64)

    def float(self):
        return self.to(dtype=plugrad.float32)

    def half(self):
        return self.to(dtype=plugrad.float16)

    def long(self):
        return self.to(dtype=plugrad.int64)

    def int(self):
        return self.to(dtype=plugrad.int32)

    def short(self):
        return self.to(dtype=plugrad.int16)

    def char(self):
        return self.to(dtype=plugrad.int8)

    def byte(self):
        return self.to(dtype=plugrad.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _lengths_list(lengths, what: str) -> list:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.dtype.is_floating_point:
            raise RuntimeError(f"{what}: 'lengths' argument should be a 1D int64 tensor (or a "
                               f"list of ints), but got a {lengths.dim()}D {lengths.dtype} "
                               f"tensor")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _cpu_long(values) -> Tensor:
    return plugrad.tensor(list(values), dtype=plugrad.long, device="cpu")


def pack_padded_sequence(input, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of sequences
    of the given ``lengths``. With ``enforce_sorted`` the lengths must be non-increasing;
    otherwise the batch is sorted here and ``sorted_indices`` remembers how."""
    lens = _lengths_list(lengths, "pack_padded_sequence")
    if input.dim() < 2:
        raise ValueError(f"pack_padded_sequence: expected a padded batch of at least 2 "
                         f"dimensions ({'B, T' if batch_first else 'T, B'}, *), got shape "
                         f"{list(input.shape)}")
    t_dim, b_dim = (1, 0) if batch_first else (0, 1)
    total, batch = input.shape[t_dim], input.shape[b_dim]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        order, sorted_indices = list(range(batch)), None
    else:  # a stable descending sort, as torch.sort gives on CPU
        order = sorted(range(batch), key=lambda b: -lens[b])
        sorted_indices = plugrad.tensor(order, dtype=plugrad.long, device=input.device)
    if batch and min(lens) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    longest = max(lens) if lens else 0
    if longest > total:
        raise RuntimeError(f"pack_padded_sequence: a length ({longest}) exceeds the padded "
                           f"input's time dimension {t_dim} (size {total}, input shape "
                           f"{list(input.shape)})")
    sorted_lens = [lens[b] for b in order]
    batch_sizes = [sum(1 for n in sorted_lens if n > t) for t in range(longest)]
    if batch_first:
        rows = [b * total + t for t, bs in enumerate(batch_sizes) for b in order[:bs]]
    else:
        rows = [t * batch + b for t, bs in enumerate(batch_sizes) for b in order[:bs]]
    flat = input.reshape(total * batch, *input.shape[2:])
    data = flat.index_select(0, plugrad.tensor(rows, dtype=plugrad.long, device=input.device))
    return PackedSequence(data, _cpu_long(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)``, the batch in its original
    order, padded with ``padding_value`` to the longest length (or ``total_length``)."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    batch = batch_sizes[0] if steps else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps_out = total_length
    else:
        steps_out = steps
    offsets = [0]
    for bs in batch_sizes:
        offsets.append(offsets[-1] + bs)
    pad_row = offsets[-1]
    unsorted = (sequence.unsorted_indices.tolist() if sequence.unsorted_indices is not None
                else list(range(batch)))
    sorted_lens = [sum(1 for bs in batch_sizes if bs > j) for j in range(batch)]

    def row(t, b):
        j = unsorted[b]
        return offsets[t] + j if t < steps and j < batch_sizes[t] else pad_row

    if batch_first:
        rows = [row(t, b) for b in range(batch) for t in range(steps_out)]
    else:
        rows = [row(t, b) for t in range(steps_out) for b in range(batch)]
    filler = plugrad.full((1, *data.shape[1:]), padding_value, dtype=data.dtype,
                          device=data.device)
    source = plugrad.cat([data, filler], 0)
    out = source.index_select(0, plugrad.tensor(rows, dtype=plugrad.long, device=data.device))
    lead = (batch, steps_out) if batch_first else (steps_out, batch)
    lengths = _cpu_long(sorted_lens[unsorted[b]] for b in range(batch))
    return out.reshape(*lead, *data.shape[1:]), lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stack sequences of shapes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` if
    ``batch_first``), padding each to the longest on ``padding_side``."""
    sequences = list(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence: expected a sequence of Tensors, but item {i} is a "
                            f"{type(s).__name__}")
        if s.dim() == 0:
            raise RuntimeError(f"pad_sequence: sequence {i} is a 0-d tensor; each sequence "
                               f"needs a length (shape (L, *))")
        if tuple(s.shape[1:]) != tuple(first.shape[1:]):
            raise RuntimeError(f"pad_sequence: all sequences must have the same trailing "
                               f"dimensions, but sequence {i} has shape {list(s.shape)} and "
                               f"sequence 0 has shape {list(first.shape)}")
    lens = [s.shape[0] for s in sequences]
    steps, batch = max(lens), len(sequences)
    offsets = [0]
    for n in lens:
        offsets.append(offsets[-1] + n)
    pad_row = offsets[-1]

    def row(t, b):
        lead = steps - lens[b] if padding_side == "left" else 0
        k = t - lead
        return offsets[b] + k if 0 <= k < lens[b] else pad_row

    if batch_first:
        rows = [row(t, b) for b in range(batch) for t in range(steps)]
    else:
        rows = [row(t, b) for t in range(steps) for b in range(batch)]
    filler = plugrad.full((1, *first.shape[1:]), padding_value, dtype=first.dtype,
                          device=first.device)
    source = plugrad.cat(sequences + [filler], 0)
    out = source.index_select(0, plugrad.tensor(rows, dtype=plugrad.long, device=first.device))
    lead = (batch, steps) if batch_first else (steps, batch)
    return out.reshape(*lead, *first.shape[1:])


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """The list of sequences :func:`pad_sequence` padded (right padding)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _lengths_list(lengths, "unpad_sequence")
    return [padded_sequences[b, :n] for b, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shapes ``(L_i, *)`` (longest first if
    ``enforce_sorted``)."""
    sequences = list(sequences)
    lengths = [s.shape[0] if isinstance(s, Tensor) and s.dim() else 0 for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences packed in ``packed_sequences``, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
