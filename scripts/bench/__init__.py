"""Benchmarks: model calls, tokens, cold start, asset sizes, cost (``python -m scripts.bench.calls``)."""
