"""RepeatedArrays: every line reads exactly as orjson reads it, while repeated history is
taken from earlier lines instead of being parsed again."""
from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.io.repeats import RepeatedArrays

PATH = (("request",), ("messages", "contents"))


def reader(**kw) -> RepeatedArrays:
    return RepeatedArrays(PATH, min_bytes=0, **kw)


def line(messages, *, key="messages", extra_before=None, extra_after=None, rid=0, dumps=json.dumps) -> bytes:
    request = dict(extra_before or {})
    request[key] = messages
    request.update(extra_after or {})
    return dumps({"id": rid, "request": request, "response": {"content": [{"type": "text", "text": "ok"}]}}).encode()


def msg(n: int, text: str = "") -> dict:
    return {"role": "user" if n % 2 == 0 else "assistant", "content": [{"type": "text", "text": f"{text}m{n}"}]}


def test_continuation_reuses_the_previous_elements_as_the_same_objects():
    r = reader()
    history = [msg(i) for i in range(5)]
    first = r.loads(line(history, rid=1))
    second = r.loads(line(history + [msg(5), msg(6)], rid=2))
    assert second == orjson.loads(line(history + [msg(5), msg(6)], rid=2))
    assert all(a is b for a, b in zip(first["request"]["messages"], second["request"]["messages"][:5]))
    assert r.reused == 5


def test_rewind_reuses_the_part_before_the_edit():
    r = reader()
    r.loads(line([msg(i) for i in range(10)], rid=1))
    rewound = [msg(i) for i in range(6)] + [msg(6, "edited ")]
    got = r.loads(line(rewound, rid=2))
    assert got == orjson.loads(line(rewound, rid=2))
    assert r.reused == 6


def test_a_side_call_between_does_not_lose_the_main_conversation():
    r = reader()
    main = [msg(i) for i in range(8)]
    r.loads(line(main, rid=1))
    r.loads(line([msg(100, "side ")], rid=2))
    got = r.loads(line(main + [msg(8)], rid=3))
    assert got == orjson.loads(line(main + [msg(8)], rid=3))
    assert r.reused == 8


def test_a_number_that_grew_is_not_taken_for_the_old_one():
    # "12" is a byte prefix of "123": the element must end where it ended before.
    r = reader()
    r.loads(b'{"request": {"messages": [1, 12]}}')
    got = r.loads(b'{"request": {"messages": [1, 123, 4]}}')
    assert got == {"request": {"messages": [1, 123, 4]}}
    assert r.reused == 1


def test_whitespace_and_empty_arrays():
    r = reader()
    for text in (b'{"request":{"messages":[]}}', b'{"request":{"messages":[ ]}}',
                 b'{ "request" : { "messages" : [ {"a": 1} , {"b": [2, 3]} ] } }',
                 b'{ "request" : { "messages" : [ {"a": 1} , {"b": [2, 3]} , "x" ] } }',
                 b'{"request":{"messages":[{"a":1},{"b":[2,3]},"x"]}}'):
        assert r.loads(text) == orjson.loads(text), text


def test_a_repeated_key_reads_as_orjson_reads_it():
    # orjson keeps the last of repeated keys; cutting the first array would be wrong.
    r = reader()
    r.loads(b'{"request": {"messages": [{"a": 1}, {"b": 2}]}}')
    dup = b'{"request": {"messages": [{"a": 1}, {"b": 2}, {"c": 3}], "messages": [{"z": 0}]}}'
    assert r.loads(dup) == {"request": {"messages": [{"z": 0}]}}
    dup_top = b'{"request": {"messages": [{"a": 1}, {"b": 2}]}, "request": {"messages": [9]}}'
    assert r.loads(dup_top) == {"request": {"messages": [9]}}
    # the same key nested deeper after the array is not a repeat
    nested = b'{"request": {"messages": [{"a": 1}, {"b": 2}], "tools": [{"messages": 1}]}}'
    assert r.loads(nested) == orjson.loads(nested)
    assert r.reused >= 2


def test_a_comma_before_the_closing_bracket_is_an_error_as_in_orjson():
    # Cutting the reused "1," out of "[1,]" would leave a valid "[]".
    r = reader()
    r.loads(b'{"request": {"messages": [1, 2]}}')
    for bad in (b'{"request": {"messages": [1,]}}', b'{"request": {"messages": [1, ]}}'):
        with pytest.raises(orjson.JSONDecodeError):
            r.loads(bad)


def test_keys_written_with_escapes_read_as_orjson_reads_them():
    # orjson decodes escapes in keys and keeps the last of repeated keys.
    r = reader()
    r.loads(b'{"request":{"messages":[1]}}')
    for text in (b'{"request":{"messages":[1,2],"m\\u0065ssages":[3]}}',
                 b'{"request":{"messages":[1,2]},"r\\u0065quest":{"messages":[3]}}',
                 b'{"request":{"m\\u0065ssages":[0],"messages":[1,2]}}',
                 b'{"request":{"messages":[1,2],"m\\u0065ssage":[3]}}'):
        assert r.loads(text) == orjson.loads(text), text
    # An array overridden by a later spelling of its key is not remembered as that line's
    # array (a later, clean line would get the wrong elements).
    big = "x" * 40000
    r = RepeatedArrays(PATH)
    first = ('{"request":{"messages":[{"content":"%s"}],"m\\u0065ssages":[{"content":"dup"}]}}' % big).encode()
    second = ('{"request":{"messages":[{"content":"%s"},{"content":"ok"}]}}' % big).encode()
    assert r.loads(first) == orjson.loads(first)
    assert r.loads(second) == orjson.loads(second)


def test_a_text_line_is_read_as_orjson_reads_it():
    assert RepeatedArrays(PATH).loads('{"request": {"messages": [1]}}' + " " * 40000) == {"request": {"messages": [1]}}


def test_escaped_keys_strings_and_other_shapes_fall_back_to_a_whole_parse():
    r = reader()
    texts = [b'{"request": {"mess\\u0061ges": [1, 2]}}', b'[{"request": {"messages": [1]}}]',
             b'{"request": [1, 2]}', b'{"request": {"messages": {"a": 1}}}', b'"just a string"',
             b'{"request": {"messages": ["a \\" ] } quote", "b"]}}',
             b'{"request": {"messages": ["a \\" ] } quote", "b", "c\\\\"]}}']
    for text in texts:
        assert r.loads(text) == orjson.loads(text), text


def test_a_broken_line_raises_as_orjson_does():
    r = reader()
    good = line([msg(i) for i in range(4)])
    r.loads(good)
    for broken in (good[:-5], good[:len(good) // 2], good.replace(b'"request"', b'"request" 1', 1)):
        with pytest.raises(orjson.JSONDecodeError):
            r.loads(broken)
    assert r.loads(good) == orjson.loads(good)


def test_short_lines_are_parsed_whole():
    r = RepeatedArrays(PATH)  # the default threshold
    history = [msg(i) for i in range(3)]
    r.loads(line(history))
    r.loads(line(history + [msg(3)]))
    assert r.reused == 0
    big = [msg(i, "x" * 4000) for i in range(20)]
    r.loads(line(big))
    got = r.loads(line(big + [msg(20)]))
    assert got == orjson.loads(line(big + [msg(20)]))
    assert r.reused == 20


def test_gemini_contents_and_keys_after_the_array():
    r = reader()
    contents = [{"role": "user", "parts": [{"text": f"t{i}"}]} for i in range(4)]
    tools = {"tools": [{"functionDeclarations": [{"name": "f", "parameters": {"messages": {"type": "array"}}}]}]}
    r.loads(line(contents, key="contents", extra_after=tools))
    text = line(contents + contents[:1], key="contents", extra_after=tools)
    assert r.loads(text) == orjson.loads(text)
    assert r.reused == 4


# -- property: any sequence of edits, any formatting, reads as orjson reads it -------------

TEXT = st.text(alphabet=st.sampled_from(list('ab "\\]}[{,:\n\té中') + ["\u2028", "\x00"]), max_size=12)
SCALAR = st.one_of(st.integers(-200, 200), st.floats(allow_nan=False, allow_infinity=False, width=32),
                   st.booleans(), st.none(), TEXT)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(TEXT, inner, max_size=3)), max_leaves=8)
STEP = st.one_of(
    st.tuples(st.just("append"), st.lists(VALUE, min_size=0, max_size=3)),
    st.tuples(st.just("rewind"), st.integers(0, 6), st.lists(VALUE, max_size=2)),
    st.tuples(st.just("edit"), st.integers(0, 6), VALUE),
    st.tuples(st.just("new"), st.lists(VALUE, max_size=4)),
)
DUMPS = [
    lambda o: json.dumps(o),
    lambda o: json.dumps(o, separators=(",", ":"), ensure_ascii=False),
    lambda o: orjson.dumps(o).decode(),
    lambda o: json.dumps(o, indent=None, separators=(" ,", " : ")),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(STEP, st.sampled_from(range(len(DUMPS))), st.booleans()), min_size=1, max_size=12))
def test_any_sequence_of_lines_reads_as_orjson_reads_it(steps):
    r = reader(keep=2)
    conversations = [[]]
    for n, (step, style, tools_first) in enumerate(steps):
        conv = conversations[-1]
        kind = step[0]
        if kind == "append":
            conv = conv + step[1]
        elif kind == "rewind":
            conv = conv[:step[1]] + step[2]
        elif kind == "edit" and conv:
            conv = list(conv)
            conv[step[1] % len(conv)] = step[2]
        elif kind == "new":
            conv = step[1]
        conversations.append(conv)
        extra = {"tools": [{"name": "t", "input_schema": {"messages": [1]}}], "model": "m"}
        text = line(conv, rid=n, extra_before=extra if tools_first else None,
                    extra_after=None if tools_first else extra, dumps=DUMPS[style])
        assert r.loads(text) == orjson.loads(text)
