"""plugrad's benchmarks: asv suites (``bench_*.py``) and ``compare.py`` (see README.md)."""
