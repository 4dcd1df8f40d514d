"""The formats that ship with traceview, registered like any other."""
from __future__ import annotations

from . import arena
from . import request_log
from . import sharegpt
from . import swf, swf_exports
from . import trials
from . import benchmark
from .registry import register

register(request_log.FORMAT)
register(swf.FORMAT)
for _fmt in swf_exports.FORMATS:  # Claude Code, Cursor, Bolt.new and Lovable exports
    register(_fmt)
register(trials.FORMAT)
register(arena.FORMAT)
register(sharegpt.FORMAT)
register(benchmark.FORMAT)
