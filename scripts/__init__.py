"""Benchmark scripts (``python -m scripts.bench_calls``, ``python -m scripts.bench_cold_start``)."""
