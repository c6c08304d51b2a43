#!/usr/bin/env python3
"""Regenerates golden/<template-id>.json: every conformance template
(manifest.json) rendered over every conversation (conversations.json) by
the reference renderer ../official/render.py (Jinja2 configured as
transformers' apply_chat_template; strftime_now fixed at
2025-03-14T09:26:53). Conversations with tool calls are rendered in the
hf, vllm and openai input styles (render.py's apply_style). Each golden
maps "<conversation>[.<style>]" to {"ok": true, "text": …} or, where the
template raised, {"ok": false, "error": "<ExceptionType>: <message>"}.
Needs python3 with Jinja2 (3.1.6 used). Run from this directory:

    python3 gen.py

Another suite of templates over the same conversations (../unseen) names
its directory, which holds its own manifest.json and golden/:

    python3 gen.py ../unseen
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "official"))
import render  # noqa: E402


def main():
    suite = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else HERE
    manifest = json.load(open(os.path.join(suite, "manifest.json"), encoding="utf-8"))["templates"]
    convs = json.load(open(os.path.join(HERE, "conversations.json"), encoding="utf-8"))["conversations"]
    out_dir = os.path.join(suite, "golden")
    os.makedirs(out_dir, exist_ok=True)
    for e in manifest:
        src = open(os.path.join(suite, e["file"]), encoding="utf-8", newline="").read()
        tmpl = render.compile_template(src)
        cases = {}
        for c in convs:
            styles = render.STYLES if render.has_tool_calls(c) else ("",)
            for st in styles:
                msgs = render.apply_style(c["messages"], st) if st else None
                ok, text = render.try_render(tmpl, e, c, msgs)
                key = c["id"] + ("." + st if st else "")
                cases[key] = {"ok": True, "text": text} if ok else {"ok": False, "error": text.rstrip("\n")}
        with open(os.path.join(out_dir, e["id"] + ".json"), "w", encoding="utf-8", newline="") as f:
            json.dump(cases, f, ensure_ascii=False, indent=1, sort_keys=True)
            f.write("\n")
    print("rendered %d templates x %d conversations with jinja2 %s" % (len(manifest), len(convs), render.jinja2.__version__))


if __name__ == "__main__":
    main()
