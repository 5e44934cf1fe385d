"""``import plugrad`` (and ``plugrad.nn``) in a fresh interpreter, via asv's ``timeraw_``."""


def timeraw_import_plugrad():
    return "import plugrad"


def timeraw_import_plugrad_nn():
    return "import plugrad.nn, plugrad.optim"


def timeraw_import_numpy_baseline():
    return "import numpy"
