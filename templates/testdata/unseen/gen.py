#!/usr/bin/env python3
"""Regenerates golden/<template-id>.json for the unseen set: every template
of manifest.json rendered over the conformance suite's conversations
(../conformance/conversations.json) by the reference renderer
../official/render.py (Jinja2 configured as transformers'
apply_chat_template; strftime_now fixed at 2025-03-14T09:26:53), in the
hf, vllm and openai input styles where a conversation has tool calls.
Same output shape as ../conformance/gen.py. Run from this directory:

    python3 gen.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "official"))
import render  # noqa: E402


def main():
    manifest = json.load(open(os.path.join(HERE, "manifest.json"), encoding="utf-8"))["templates"]
    convs = json.load(open(os.path.join(HERE, "..", "conformance", "conversations.json"), encoding="utf-8"))["conversations"]
    out_dir = os.path.join(HERE, "golden")
    os.makedirs(out_dir, exist_ok=True)
    for e in manifest:
        src = open(os.path.join(HERE, e["file"]), encoding="utf-8", newline="").read()
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
