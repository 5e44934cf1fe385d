"""Holds the ``sitecustomize`` that installs the torch alias in child processes."""
