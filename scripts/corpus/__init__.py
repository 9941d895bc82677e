"""The conversation corpus: the stand-in model, the player, the reports (``python -m scripts.corpus.report``)."""
