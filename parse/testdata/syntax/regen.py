#!/usr/bin/env python3
"""Re-renders the fixtures of this directory with the reference renderer.

Usage (from the repository root, with ../shared present):
    python3 parse/testdata/syntax/regen.py ../shared/templates

Builds a manifest of the templates in SHARED/manifest.json and
SHARED/more/modern/sources.json, renders conversations.json (one call, two
parallel calls, ending with the assistant's tool-call turn) with
SHARED/render.py, and copies, for every template directory already here,
the first input style (hf, vllm, openai) whose render holds the calls.
"""
import json, os, shutil, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
shared = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp()
m = json.load(open(os.path.join(shared, "manifest.json")))
entries = [e for e in m["templates"] if not e.get("alias_of")]
for e in entries:
    e["file"] = os.path.join(shared, e["file"])
for t in json.load(open(os.path.join(shared, "more/modern/sources.json")))["templates"]:
    entries.append({"id": t["name"], "file": os.path.join(shared, "more/modern", t["name"] + ".jinja"),
                    "special_tokens": t.get("special_tokens"), "kwargs": t.get("kwargs", {})})
json.dump({"templates": entries}, open(os.path.join(tmp, "manifest.json"), "w"))
out = os.path.join(tmp, "out")
subprocess.run([sys.executable, os.path.join(shared, "render.py"), "--manifest", os.path.join(tmp, "manifest.json"),
                "--conversations", os.path.join(here, "conversations.json"), "--out", out], check=True)
for d in sorted(os.listdir(here)):
    if not os.path.isdir(os.path.join(here, d)):
        continue
    for conv in ("one_call", "two_calls"):
        for style in ("hf", "vllm", "openai"):
            f = os.path.join(out, d, conv + "." + style + ".txt")
            if os.path.exists(f):
                text = open(f, encoding="utf-8").read()
                if "Paris" in text[text.rfind("END_OF_USER_TURN"):]:
                    shutil.copyfile(f, os.path.join(here, d, conv + ".txt"))
                    break
