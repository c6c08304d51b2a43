#!/usr/bin/env python3
"""Writes conversations.json for the conformance suite: the 13 family
conversations of ../conversations.json, the 4 of the shared data set
(SHARED/templates/conversations.json, ids prefixed "shared_"), and the
ones below (call arguments of every JSON type, a call beside text,
parallel calls answered, content as a list of parts, thinking off,
reasoning on a tool-call turn without content). Tool
calls are written once; gen.py renders each conversation that has them
in the hf, vllm and openai input styles. Run once; the output is committed.
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("SHARED", os.path.join(HERE, "..", "..", "..", "..", "shared"))

OPTS = {"type": "function", "function": {"name": "set_options", "description": "Set options: one of each JSON type.",
        "parameters": {"type": "object", "properties": {
            "label": {"type": "string"}, "count": {"type": "integer"}, "ratio": {"type": "number"},
            "enabled": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object"}, "note": {"type": ["string", "null"]}},
            "required": ["label", "count"]}}}
ALL_TYPES = {"label": "café ☕ \"quoted\" <b>", "count": 3, "ratio": 0.25, "enabled": True,
             "tags": ["x", "y"], "meta": {"k": "v", "n": [1, 2]}, "note": None}


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def added(base):
    sys_ = {"role": "system", "content": "You are a helpful assistant."}
    weather = next(t for t in base["b_tools"]["tools"] if t["function"]["name"] == "get_weather")
    tools = [weather, OPTS]
    u = {"role": "user", "content": "Set the options, then check the weather in Paris and Tokyo."}
    return [
        {"id": "i_call_all_types", "tools": tools, "messages": [
            sys_, u,
            {"role": "assistant", "content": "", "tool_calls": [call("call00011", "set_options", ALL_TYPES)]},
            {"role": "tool", "tool_call_id": "call00011", "name": "set_options", "content": "ok"}]},
        {"id": "j_call_beside_text", "tools": tools, "messages": [
            sys_, u,
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                call("call00012", "get_weather", {"location": "Paris"})]},
            {"role": "tool", "tool_call_id": "call00012", "name": "get_weather", "content": "18 C"}]},
        {"id": "k_parallel_answered", "tools": tools, "messages": [
            sys_, u,
            {"role": "assistant", "content": "", "tool_calls": [
                call("call00013", "get_weather", {"location": "Paris"}),
                call("call00014", "get_weather", {"location": "Tokyo", "unit": "celsius"})]},
            {"role": "tool", "tool_call_id": "call00013", "name": "get_weather", "content": "18 C"},
            {"role": "tool", "tool_call_id": "call00014", "name": "get_weather", "content": "21 C"},
            {"role": "assistant", "content": "Paris 18 °C, Tokyo 21 °C."},
            {"role": "user", "content": "And London?"}]},
        {"id": "l_content_parts", "tools": None, "messages": [
            sys_, {"role": "user", "content": [{"type": "text", "text": "Describe "}, {"type": "text", "text": "Paris."}]}]},
        {"id": "m_thinking_off", "tools": tools, "kwargs": {"enable_thinking": False}, "messages": [
            sys_, {"role": "user", "content": "What's the weather in Paris right now?"}]},
        # Reasoning on a tool-call turn that has no content: gen.py renders it
        # without a content key (hf), with "" (vllm) and with null (openai).
        {"id": "n_reasoning_call_no_content", "tools": tools, "messages": [
            sys_, {"role": "user", "content": "What's the weather in Paris right now?"},
            {"role": "assistant", "reasoning_content": "The user wants the current weather in Paris; get_weather takes the city.",
             "tool_calls": [call("call00021", "get_weather", {"location": "Paris", "unit": "celsius"})]},
            {"role": "tool", "tool_call_id": "call00021", "name": "get_weather", "content": "18 C, cloudy"}]},
    ]


def main():
    base = {c["id"]: c for c in json.load(open(os.path.join(HERE, "..", "conversations.json"), encoding="utf-8"))["conversations"]}
    convs = list(copy.deepcopy(list(base.values())))
    for c in json.load(open(os.path.join(SHARED, "templates", "conversations.json"), encoding="utf-8"))["conversations"]:
        c = copy.deepcopy(c)
        c["id"] = "shared_" + c["id"]
        convs.append(c)
    convs += added(base)
    with open(os.path.join(HERE, "conversations.json"), "w", encoding="utf-8") as f:
        json.dump({"conversations": convs}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("%d conversations" % len(convs))


if __name__ == "__main__":
    main()
