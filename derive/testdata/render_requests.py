#!/usr/bin/env python3
"""Render derive's recorded requests through the reference Jinja2 renderer.

Reads requests.json (written by `go test ./derive -run TestRequestsFile -update`:
the probe set plus the round-trip conversations) and renders every request
through every template of templates/testdata/conformance/manifest.json (the
conformance suite's 75 templates, with their special tokens and kwargs), with
templates/testdata/official/render.py (a copy of the shared reference renderer:
Jinja2 configured like transformers' apply_chat_template). Writes
renders/<id>.json. With the argument "unseen", the templates of
templates/testdata/unseen/manifest.json instead, into renders-unseen/; with
"reconstructed", those of derive/testdata/reconstructed/manifest.json, into
renders-reconstructed/. Run from anywhere:

    python3 derive/testdata/render_requests.py
    python3 derive/testdata/render_requests.py unseen
    python3 derive/testdata/render_requests.py reconstructed
"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
suite = sys.argv[1] if len(sys.argv) > 1 else "conformance"
if suite not in ("conformance", "unseen", "reconstructed"):
    sys.exit("usage: render_requests.py [unseen|reconstructed]")
conformance = os.path.join(repo, "templates", "testdata", suite)
if suite == "reconstructed":
    conformance = os.path.join(here, "reconstructed")
sys.path.insert(0, os.path.join(repo, "templates", "testdata", "official"))
import render as ref  # noqa: E402

requests = json.load(open(os.path.join(here, "requests.json")))
manifest = json.load(open(os.path.join(conformance, "manifest.json")))["templates"]

out_dir = os.path.join(here, "renders" if suite == "conformance" else "renders-" + suite)
os.makedirs(out_dir, exist_ok=True)
for entry in manifest:
    path = os.path.normpath(os.path.join(conformance, entry["file"]))
    tmpl = ref.compile_template(open(path, encoding="utf-8").read())
    renders = {}
    for r in requests:
        req = r["request"]
        conv = {"messages": req["messages"], "tools": req["tools"],
                "add_generation_prompt": req["add_generation_prompt"]}
        ok, text = ref.try_render(tmpl, entry, conv)
        renders[r["name"]] = {"text": text} if ok else {"error": text.rstrip("\n")}
    rec = {"id": entry["id"], "set": entry["set"], "file": os.path.relpath(path, repo),
           "special_tokens": {k: v for k, v in (entry.get("special_tokens") or {}).items() if v is not None},
           "renders": renders}
    with open(os.path.join(out_dir, entry["id"] + ".json"), "w", encoding="utf-8") as f:
        json.dump(rec, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
print("rendered", len(requests), "requests for", len(manifest), "templates")
