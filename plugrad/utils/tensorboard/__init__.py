"""``torch.utils.tensorboard``: :class:`SummaryWriter`, writing real TensorBoard event files
through tensorboardX (the optional extra ``pip install 'plugrad[tensorboard]'``).

Tensors are handed to tensorboardX as NumPy arrays, so it never needs PyTorch; tensorboardX
is imported with the real torch kept out of reach (it would otherwise import it to
recognise tensors). ``add_graph`` has no tracer to draw from here: it warns and writes
nothing.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np

import plugrad

EXTRA_HINT = ("torch.utils.tensorboard (plugrad.utils.tensorboard) writes event files through "
              "tensorboardX, which is not installed: pip install 'plugrad[tensorboard]' "
              "(or pip install tensorboardX)")


def _tensorboardx():
    blocked = "torch" not in sys.modules
    if blocked:
        sys.modules["torch"] = None  # tensorboardX tries `import torch`; let it fail
    try:
        import tensorboardX
    except ImportError as exc:
        raise ModuleNotFoundError(EXTRA_HINT, name="tensorboardX") from exc
    finally:
        if blocked and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return tensorboardX


def _numpy(value):
    """Tensors (also inside lists, tuples and dicts) as NumPy arrays; the rest unchanged."""
    if isinstance(value, plugrad.Tensor):
        out = np.asarray(value.detach())
        return out.astype(np.float32) if out.dtype.kind == "V" else out  # bfloat16
    if isinstance(value, (list, tuple)) and any(isinstance(v, plugrad.Tensor) for v in value):
        return np.stack([_numpy(v) for v in value])
    if isinstance(value, dict):
        return {k: _numpy(v) for k, v in value.items()}
    return value


class SummaryWriter:
    """PyTorch's ``SummaryWriter(log_dir=None, comment='', purge_step=None, max_queue=10,
    flush_secs=120, filename_suffix='')``: events go to ``log_dir`` (default
    ``runs/DATE_TIME_HOST``), read by ``tensorboard --logdir``."""

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = ""):
        tbx = _tensorboardx()
        self._writer = tbx.SummaryWriter(logdir=log_dir, comment=comment,
                                         purge_step=purge_step, max_queue=max_queue,
                                         flush_secs=flush_secs,
                                         filename_suffix=filename_suffix)
        self.log_dir = self._writer.logdir

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None,
                   new_style=False, double_precision=False):
        """``new_style`` / ``double_precision`` are accepted; the value is stored as
        TensorBoard's classic float scalar."""
        value = _numpy(scalar_value)
        self._writer.add_scalar(tag, float(np.asarray(value).reshape(())), global_step,
                                walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        values = {k: float(np.asarray(_numpy(v)).reshape(())) for k, v in tag_scalar_dict.items()}
        self._writer.add_scalars(main_tag, values, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        self._writer.add_histogram(tag, np.asarray(_numpy(values)), global_step, bins,
                                   walltime, max_bins)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._writer.add_image(tag, np.asarray(_numpy(img_tensor)), global_step, walltime,
                               dataformats=dataformats)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None,
                   dataformats="NCHW"):
        self._writer.add_images(tag, np.asarray(_numpy(img_tensor)), global_step, walltime,
                                dataformats=dataformats)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._writer.add_text(tag, text_string, global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not drawn: PyTorch traces the model with TorchScript, which plugrad does not have;
        the call is accepted so that a program runs on."""
        warnings.warn("SummaryWriter.add_graph: plugrad has no TorchScript tracer to draw the "
                      "model graph from; no graph was written", UserWarning, stacklevel=2)

    def __getattr__(self, name):
        """The other ``add_*`` methods (hparams, pr_curve, embedding, figure, ...) with their
        tensor arguments as NumPy arrays."""
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self._writer, name)
        if not callable(method):
            return method

        def call(*args, **kwargs):
            return method(*[_numpy(a) for a in args],
                          **{k: _numpy(v) for k, v in kwargs.items()})
        return call

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
