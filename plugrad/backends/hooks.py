"""The plugin-facing hooks: what a backend package implements to plug into plugrad.

A plugin is a module (or object) with functions marked ``@hookimpl``. It is found through
the entry-point group ``plugrad.backends``; the built-in backends register the same way.
"""
from __future__ import annotations

import pluggy

PROJECT = "plugrad"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class BackendSpecs:
    """Hook specifications of the ``plugrad`` project."""

    @hookspec
    def plugrad_backends(self):
        """Return a list of :class:`plugrad.backends.Backend` instances this plugin provides.

        Constructing a backend must be cheap and must not import its array library: the
        library is imported when the device is first used.
        """

    @hookspec
    def plugrad_kernels(self, backend):
        """Return ``{op_name: function}`` contributing or overriding kernels of ``backend``
        (a registered Backend), or None. Functions take the same arguments as the
        primitive of that name. Among plugins, ``tryfirst``/``trylast`` decide who wins.
        """
