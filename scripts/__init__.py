"""Scripts run with ``python -m``, by family: ``scripts.bench`` (benchmarks), ``scripts.corpus`` (the
conversation corpus and its reports), ``scripts.tools`` (the coverage and mutation gates)."""
