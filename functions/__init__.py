"""Lambda entry points: one folder per function, each thin (parse -> one core call -> map).

Cold start (docs/benchmarks.md, section 2): importing a function's package (``functions/inbound``,
``functions/enrollment``, ...) pauses the cyclic garbage collector, and
``functions.common.lambda_entry`` resumes it once the function's handler is defined
(``promptpipe.collector``, the one helper that does this).
"""
