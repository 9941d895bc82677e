"""Lambda entry points: one folder per function, each thin (parse -> one core call -> map)."""
