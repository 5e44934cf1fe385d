"""``plugrad.nn.utils``: gradient clipping, parameter/vector conversion, and ``rnn`` (packed
and padded sequences)."""
from plugrad.nn.utils import rnn
from plugrad.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from plugrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "rnn"]
