"""Anthropic Messages API shapes: system blocks, content blocks (text, thinking, tool_use,
tool_result, images), tools with input_schema."""
from __future__ import annotations

from parsers.model import Message, json_kind, pointer
from parsers.providers.messages import MessageReader, image_of_block, json_text, result_content


class ClaudeMessages(MessageReader):
    name = "claude"
    def request_messages(self, req: dict) -> list[Message]:
        out: list[Message] = []
        system = req.get("system")
        if isinstance(system, str):
            if system:
                out.append(Message("system", system))
        elif isinstance(system, list):
            out.extend(self.cached({"system": system}, lambda: self.system_blocks(system)))
        msgs = req.get("messages")
        if not isinstance(msgs, list):
            self.problem("/request/messages", f"expected an array of messages, found {json_kind(msgs)}")
            return out
        out.extend(self.convert_history(msgs, lambda m, i: self.message(m, pointer("request", "messages", i))))
        return out

    def system_blocks(self, system: list) -> list[Message]:
        out = []
        for i, b in enumerate(system):
            if isinstance(b, dict) and b.get("type", "text") == "text":
                out.append(Message("system", str(b.get("text", ""))))
            elif isinstance(b, str):
                out.append(Message("system", b))
            else:
                self.problem(pointer("request", "system", i), "expected a text block; kept as JSON text")
                out.append(Message("system", json_text(b)))
        return out

    def message(self, m, path: str) -> list[Message]:
        if not isinstance(m, dict):
            self.problem(path, f"expected a message object, found {json_kind(m)}; skipped")
            return []
        role = m.get("role")
        if role not in ("user", "assistant", "system"):
            self.problem(path + "/role", f"expected user or assistant, found {role!r}; read as user")
            role = "user"
        return self.blocks(role, m.get("content"), path + "/content")

    def blocks(self, role: str, content, path: str) -> list[Message]:
        if content is None:
            return []
        if isinstance(content, str):
            return [Message(role, content)]
        if not isinstance(content, list):
            self.problem(path, f"expected a string or an array of content blocks, found {json_kind(content)}")
            return [Message(role, json_text(content))]
        out: list[Message] = []
        calls: list[dict] = []
        for i, b in enumerate(content):
            if not isinstance(b, dict):
                if isinstance(b, str):
                    out.append(Message(role, b))
                else:
                    self.problem(f"{path}/{i}", f"expected a content block object, found {json_kind(b)}; skipped")
                continue
            t = b.get("type")
            if t == "text":
                out.append(Message(role, str(b.get("text") or "")))
            elif t == "thinking":
                if b.get("thinking"):  # signature-only blocks carry nothing to read
                    out.append(Message("thinking", str(b["thinking"])))
            elif t == "redacted_thinking":
                out.append(Message("thinking", "[redacted thinking]"))
            elif t in ("tool_use", "server_tool_use", "mcp_tool_use"):
                # A string input only arises from a stream whose JSON did not parse; the
                # stream rebuild already reported it and kept the text.
                args = b.get("input")
                calls.append({"name": b.get("name"), "arguments": args if args is not None else {}, "id": b.get("id")})
            elif t == "tool_result" or (isinstance(t, str) and t.endswith("_tool_result")):
                text, images = result_content(b.get("content"))
                out.append(Message("tool_result", text, tool_use_id=b.get("tool_use_id"),
                                   is_error=bool(b.get("is_error", False)), images=images))
            elif t == "image":
                out.append(Message(role, "[image]", images=[image_of_block(b)]))
            elif t == "document":
                out.append(Message(role, "[document]"))
            else:
                out.append(Message(role, json_text(b)))
        if calls:  # all tool_use blocks of a message form one tool_use message, after the rest
            out.append(Message("tool_use", "", tool_calls=calls))
        return out

    def response_messages(self, r: dict) -> tuple[list[Message], str | None]:
        return self.blocks("assistant", r.get("content"), "/response/content"), r.get("stop_reason")

    def tools(self, tools) -> list[dict]:
        out = []
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            if "function" in t and isinstance(t["function"], dict):  # OpenAI-shaped tool in a Claude call
                f = t["function"]
                out.append({"name": f.get("name"), "description": f.get("description"), "parameters": f.get("parameters")})
            else:
                params = t.get("input_schema")
                if params is None and t.get("type") and t.get("type") != "custom":
                    params = {k: v for k, v in t.items() if k not in ("name", "description")}  # server tools
                out.append({"name": t.get("name"), "description": t.get("description"), "parameters": params})
        return out
