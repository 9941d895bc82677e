"""The inbound functions: the webhook and the worker.

Importing this package pauses the garbage collector until the function's handler is defined (cold
start: functions/__init__.py).
"""

from promptpipe.collector import pause_collector

pause_collector()
