"""OpenAI shapes: chat completions messages (tool_calls, tool role, content parts) and the
Responses API items."""
from __future__ import annotations

from parsers.model import Message, json_kind, pointer
from parsers.providers.messages import IMAGE_BLOCKS, MessageReader, image_of_block, json_text, result_content


class OpenAIMessages(MessageReader):
    name = "openai"
    def request_messages(self, req: dict) -> list[Message]:
        msgs = req.get("messages")
        if not isinstance(msgs, list):
            self.problem("/request/messages", f"expected an array of messages, found {json_kind(msgs)}")
            return []
        return self.convert_history(msgs, lambda m, i: self.message(m, pointer("request", "messages", i)))

    def content(self, role: str, content, path: str) -> list[Message]:
        if content is None:
            return []
        if isinstance(content, str):
            return [Message(role, content)]
        if isinstance(content, list):
            out = []
            for i, p in enumerate(content):
                if isinstance(p, str):
                    out.append(Message(role, p))
                elif isinstance(p, dict):
                    t = p.get("type")
                    if t in ("text", "input_text", "output_text"):
                        out.append(Message(role, str(p.get("text") or "")))
                    elif t in IMAGE_BLOCKS:
                        out.append(Message(role, "[image]", images=[image_of_block(p)]))
                    elif t in ("input_audio", "audio"):
                        out.append(Message(role, "[audio]"))
                    elif t == "file":
                        out.append(Message(role, "[file]"))
                    else:
                        out.append(Message(role, json_text(p)))
                else:
                    self.problem(f"{path}/{i}", f"expected a content part, found {json_kind(p)}; skipped")
            return out
        self.problem(path, f"expected a string or an array of parts, found {json_kind(content)}")
        return [Message(role, json_text(content))]

    def message(self, m, path: str) -> list[Message]:
        if not isinstance(m, dict):
            self.problem(path, f"expected a message object, found {json_kind(m)}; skipped")
            return []
        role = m.get("role")
        if role in ("system", "developer"):
            return self.content("system", m.get("content"), path + "/content")
        if role == "user":
            return self.content("user", m.get("content"), path + "/content")
        if role in ("tool", "function"):
            text, images = result_content(m.get("content"))
            msg = Message("tool_result", text, tool_use_id=m.get("tool_call_id"),
                          is_error=bool(m.get("is_error", False)), images=images)
            if m.get("name"):
                msg.extra = {"name": m["name"]}
            return [msg]
        if role == "assistant":
            return self.assistant(m, path)
        self.problem(path + "/role", f"expected system, user, assistant or tool, found {role!r}; read as user")
        return self.content("user", m.get("content"), path + "/content")

    def assistant(self, m: dict, path: str) -> list[Message]:
        out: list[Message] = []
        reasoning = m.get("reasoning_content") or m.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out.append(Message("thinking", reasoning))
        raw_calls = m.get("tool_calls")
        if not raw_calls and isinstance(m.get("function_call"), dict):
            raw_calls = [{"function": m["function_call"]}]
        if raw_calls:
            calls = []
            for i, c in enumerate(raw_calls):
                if not isinstance(c, dict):
                    self.problem(f"{path}/tool_calls/{i}", f"expected a tool call object, found {json_kind(c)}; skipped")
                    continue
                f = c.get("function") if isinstance(c.get("function"), dict) else {}
                name = f.get("name")
                calls.append({"name": name,
                              "arguments": self.parse_arguments(f.get("arguments"), f"{path}/tool_calls/{i}/function/arguments", name),
                              "id": c.get("id")})
            texts = self.content("assistant", m.get("content"), path + "/content")
            images = [im for t in texts for im in t.images or ()]
            out.append(Message("tool_use", "\n".join(t.content for t in texts), tool_calls=calls,
                               images=images or None))
            return out
        out.extend(self.content("assistant", m.get("content"), path + "/content"))
        return out

    def response_messages(self, r: dict) -> tuple[list[Message], str | None]:
        choices = r.get("choices")
        if not isinstance(choices, list) or not choices:
            hint = (" (it holds content blocks as an Anthropic Messages response does: read it with "
                    "--format claude)" if isinstance(r.get("content"), list) else "")
            self.problem("/response/choices", f"expected an array of choices, found {json_kind(choices)}; "
                                              f"the request is kept without its answer{hint}")
            return [], None
        c = choices[0] if isinstance(choices[0], dict) else {}
        msg = c.get("message") or c.get("delta") or {}
        if not isinstance(msg, dict):
            self.problem("/response/choices/0/message", f"expected an object, found {json_kind(msg)}")
            return [], c.get("finish_reason")
        return self.assistant(msg, "/response/choices/0/message"), c.get("finish_reason")

    def tools(self, tools) -> list[dict]:
        out = []
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            f = t.get("function") if isinstance(t.get("function"), dict) else t
            out.append({"name": f.get("name"), "description": f.get("description"), "parameters": f.get("parameters")})
        return out
