"""The typed model every format converts into and the cook reads: messages and their parts,
calls (requests), traces, problems; plus the error vocabulary."""
from parsers.model.problem import (ConversionError, Problem, UnsupportedFormatError, ValidationError,
                                   WorkflowFormatError, internal_error, json_kind, pointer)
from parsers.model.format import Companion, Format
from parsers.model.parts import ImageRef
from parsers.model.trace import (MODEL_ROLES, OUTCOMES, ROLES, USAGE_KINDS, Call, Message, ParsedTrace,
                                 ParseResult, Turn)

__all__ = ["Companion", "Format", "ImageRef", "ConversionError", "Problem", "UnsupportedFormatError", "ValidationError", "WorkflowFormatError",
           "internal_error", "json_kind", "pointer", "MODEL_ROLES", "OUTCOMES", "ROLES", "USAGE_KINDS", "Call", "Message",
           "ParsedTrace", "ParseResult", "Turn"]
