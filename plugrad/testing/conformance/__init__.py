"""The plugrad conformance suite, generated from :mod:`plugrad.testing.opdb`.

Run it on a backend from any folder::

    pytest --pyargs plugrad.testing.conformance --plugrad-backend NAME

Tests are parametrised over (op, backend, dtype), in every dtype the backend declares:

* ``test_kernels``: each required primitive and optional kernel against the reference
  backend, on ordinary samples and on special values (NaN, infinities, signed zeros, the
  largest and subnormal values, rounding ties, integer wraparound, weak scalars that are
  inexact in the dtype), bit for bit where IEEE 754 defines one result; no kernel may warn
  or raise on IEEE cases, write its inputs, or return a result sharing memory with them
  (movement primitives excepted);
* ``test_contract``: the clauses of :mod:`plugrad.testing._contract` that need more than one
  call (random streams: range, seeding, independence, distribution; weak scalars; rounding
  to the dtype; host transfer; device indices);
* ``test_ops``: every public op on the device: forward values, ``gradcheck`` in float64,
  function/method/in-place agreement, output dtypes, unsupported dtypes, inputs unmodified;
* ``test_backend``: the promotion table, random streams and coverage of the op database.

Expected failures are declared in the database and reported as strict xfails.
``tests/testing/test_mutants.py`` holds the suite to refusing every deliberately broken
backend of ``tests/testing/mutants.py``, one clause each.
"""
