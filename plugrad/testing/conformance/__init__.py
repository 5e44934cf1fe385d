"""The plugrad conformance suite, generated from :mod:`plugrad.testing.opdb`.

Run it on a backend from any folder::

    pytest --pyargs plugrad.testing.conformance --plugrad-backend NAME

Tests are parametrised over (op, backend, dtype): forward values against the reference
backend, ``gradcheck`` in float64, function/method/in-place agreement, output dtypes,
unsupported dtypes, inputs left unmodified; plus the promotion table, random streams and
coverage of the op database. Expected failures are declared in the database and reported
as strict xfails.
"""
