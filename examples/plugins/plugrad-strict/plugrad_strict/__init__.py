"""Register array-api-strict as plugrad's ``strict`` device.

array-api-strict implements the Array API standard and nothing more, so it is the honest
test of plugrad's promise: any compliant array library is a backend with (almost) no kernels
of its own. Everything below is the plugin; the generic ``ArrayAPIBackend`` does the rest.

What array-api-strict lacks is either refused clearly or falls back:

* dtypes: it has no float16, bfloat16, int8/int16/uint8 in this plugin's list, so a tensor of
  one of those on ``strict`` raises ``plugrad.DTypeError`` naming the backend and the dtypes
  it does support;
* scatter-add and random numbers are not in the standard: ``ArrayAPIBackend`` runs them on
  host NumPy and copies back (correct, not fast);
* optional kernels it has no function for use the contract's composite fallbacks.
"""
from plugrad.backends.array_api import ArrayAPIBackend
from plugrad.backends.hooks import hookimpl


def _namespace():
    import array_api_strict
    return array_api_strict


class StrictBackend(ArrayAPIBackend):
    """array-api-strict on the host; it has no float16, so neither does this device."""

    def __init__(self):
        super().__init__("array-api-strict", "strict", _namespace,
                         dtypes={"bool", "int32", "int64", "float32", "float64"})


@hookimpl
def plugrad_backends():
    return [StrictBackend()]
