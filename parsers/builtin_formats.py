"""The formats that ship with traceview, registered like any other."""
from __future__ import annotations

from . import request_log
from .registry import register

register(request_log.FORMAT)
