"""Register array-api-strict as plugrad's ``strict`` device.

array-api-strict implements the Array API standard and nothing more, so it is the honest
test of plugrad's promise: any compliant array library is a backend with no kernels of its
own. Everything below is the plugin; the generic ``ArrayAPIBackend`` does the rest.
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
