"""Gates run by ``make test`` and ``make mutation`` (``python -m scripts.tools.coverage_gate``)."""
