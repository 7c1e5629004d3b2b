"""The wire protocol of every child probe script (stdlib only; imported as a sibling module).

A child writes one JSON object per line on a private copy of its stdout and flushes after each,
so whatever it learned before a crash or a hang still reaches the parent. Native libraries that
print to stdout would corrupt that stream, so fd 1 is pointed at stderr once the channel is open.
"""

import json
import os
import sys

_channel = None


def open_channel():
    global _channel
    if _channel is None:
        private_fd = os.dup(1)
        os.dup2(2, 1)
        _channel = os.fdopen(private_fd, "w", 1)  # positional: Python 2.7 targets too
    return _channel


def emit(key, value):
    """Record one fact; the parent merges keys (a later key replaces an earlier one)."""
    channel = open_channel()
    channel.write(json.dumps({key: value}, default=str) + "\n")
    channel.flush()
