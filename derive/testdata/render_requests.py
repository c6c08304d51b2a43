#!/usr/bin/env python3
"""Render derive's recorded requests through the reference Jinja2 renderer.

Reads requests.json (written by `go test ./derive -run TestRequestsFile -update`:
the probe set plus the round-trip conversations) and renders every request
through every template of the shared reference set with
../shared/templates/render.py's configuration (transformers'
apply_chat_template: trim_blocks, lstrip_blocks, loop controls, Python
tojson, raise_exception, fixed strftime_now), writing renders/<id>.json.

    python3 derive/testdata/render_requests.py /work/shared/templates

The renders are the reference renderer's output, replayed by derive's tests
so that they run from a clone without ../shared or Python.
"""
import json
import os
import sys

shared = os.path.abspath(sys.argv[1])
sys.path.insert(0, shared)
import render as ref  # noqa: E402  (../shared/templates/render.py)

here = os.path.dirname(os.path.abspath(__file__))
requests = json.load(open(os.path.join(here, "requests.json")))


def family_tokens(name):
    """BOS/EOS as the index entry's family defines them (the index has none)."""
    if "llama3" in name:
        return {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
    if "gemma" in name:
        return {"bos_token": "<bos>", "eos_token": "<eos>"}
    if "chatml" in name:
        return {"eos_token": "<|im_end|>"}
    return {"bos_token": "<s>", "eos_token": "</s>"}


def entries():
    man = json.load(open(os.path.join(shared, "manifest.json")))
    for t in man["templates"]:
        yield t["id"], os.path.join(shared, t["file"]), t, "templates/manifest.json"
    mod = json.load(open(os.path.join(shared, "more/modern/sources.json")))
    for t in mod["templates"]:
        yield t["name"], os.path.join(shared, "more/modern", t["name"] + ".jinja"), t, "more/modern/sources.json"
    idx = os.path.join(shared, "more/ollama-index")
    for f in sorted(os.listdir(idx)):
        if f.endswith(".jinja"):
            yield "ollama-index-" + f[:-6], os.path.join(idx, f), {"special_tokens": family_tokens(f)}, \
                "more/ollama-index (Ollama template/index.json)"


out_dir = os.path.join(here, "renders")
os.makedirs(out_dir, exist_ok=True)
for tid, path, entry, origin in entries():
    src = open(path, encoding="utf-8").read()
    tmpl = ref.compile_template(src)
    renders = {}
    for r in requests:
        req = r["request"]
        conv = {"messages": req["messages"], "tools": req["tools"],
                "add_generation_prompt": req["add_generation_prompt"]}
        ok, text = ref.try_render(tmpl, entry, conv)
        renders[r["name"]] = {"text": text} if ok else {"error": text.rstrip("\n")}
    rec = {"id": tid, "file": os.path.relpath(path, shared), "listed_in": origin,
           "special_tokens": {k: v for k, v in (entry.get("special_tokens") or {}).items() if v is not None},
           "kwargs": entry.get("kwargs") or {}, "renders": renders}
    with open(os.path.join(out_dir, tid + ".json"), "w", encoding="utf-8") as f:
        json.dump(rec, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
print("rendered", len(requests), "requests for", len(os.listdir(out_dir)), "templates")
