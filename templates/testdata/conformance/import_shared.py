#!/usr/bin/env python3
"""Imports the conformance templates from the shared data set into this
directory (templates/ + manifest.json). Run once from this directory with
the shared data at ../../../../shared (or SHARED=path); the Go tests never
run it, they read what it wrote.

Sources: SHARED/templates/templates (24 official templates, manifest.json),
SHARED/templates/more/modern (11, sources.json), SHARED/templates/more/
ollama-index (37, Ollama v0.17.4 template/index.json). Templates already
in ../official are referenced there instead of copied.
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("SHARED", os.path.join(HERE, "..", "..", "..", "..", "shared"))
OFFICIAL = os.path.join(HERE, "..", "official")

# Ollama's index names no tokenizer: these are the BOS/EOS texts of each
# family's usual tokenizer config (see README.md).
OLLAMA_TOKENS = {
    "chatml": ("<s>", "<|im_end|>"),
    "zephyr": ("<s>", "</s>"),
    "openchat": ("<s>", "<|end_of_turn|>"),
    "mistral-instruct": ("<s>", "</s>"),
    "starcoder2-instruct": ("<|endoftext|>", "<|endoftext|>"),
    "llama2-chat": ("<s>", "</s>"),
    "codellama-70b-instruct": ("<s>", "</s>"),
    "alpaca": ("<s>", "</s>"),
    "chatqa": ("<|begin_of_text|>", "<|end_of_text|>"),
    "gemma-instruct": ("<bos>", "<eos>"),
    "gemma3-instruct": ("<bos>", "<eos>"),
    "llama3-instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "granite-instruct": ("<|end_of_text|>", "<|end_of_text|>"),
    "magicoder": ("<s>", "</s>"),
    "alfred": ("<s>", "</s>"),
    "phi-3": ("<s>", "<|endoftext|>"),
    "falcon-instruct": ("<|endoftext|>", "<|endoftext|>"),
    "solar-instruct": ("<s>", "</s>"),
    "command-r": ("<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
}


def place(src_dir, name):
    """Returns the manifest path of a template: ../official/NAME when that
    copy is byte-identical, else templates/NAME (copied)."""
    src = os.path.join(src_dir, name)
    off = os.path.join(OFFICIAL, name)
    if os.path.exists(off) and open(off, "rb").read() == open(src, "rb").read():
        return "../official/" + name
    os.makedirs(os.path.join(HERE, "templates"), exist_ok=True)
    shutil.copyfile(src, os.path.join(HERE, "templates", name))
    return "templates/" + name


def tokens(st):
    return {"bos_token": st.get("bos_token"), "eos_token": st.get("eos_token")}


def main():
    out = []
    base = os.path.join(SHARED, "templates")
    for e in json.load(open(os.path.join(base, "manifest.json"), encoding="utf-8"))["templates"]:
        if e.get("alias_of"):
            continue
        name = os.path.basename(e["file"])
        if name == "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja":
            name = "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja"  # byte-identical alias, kept in ../official
            path = "../official/" + name
        else:
            path = place(os.path.join(base, "templates"), name)
        out.append({"id": e["id"], "set": "official", "file": path, "special_tokens": tokens(e["special_tokens"]),
                    "kwargs": e.get("kwargs") or {}, "source": e.get("source", {}).get("repo", "")})
    modern = os.path.join(base, "more", "modern")
    for e in json.load(open(os.path.join(modern, "sources.json"), encoding="utf-8"))["templates"]:
        out.append({"id": e["name"], "set": "modern", "file": place(modern, e["name"] + ".jinja"),
                    "special_tokens": tokens(e["special_tokens"]), "kwargs": e.get("kwargs") or {},
                    "source": "%s %s@%s" % (e["repo"], e["path"], e["commit"])})
    idx = os.path.join(base, "more", "ollama-index")
    for name in sorted(os.listdir(idx)):
        if not name.endswith(".jinja"):
            continue
        fam = name[3:-len(".jinja")]
        bos, eos = OLLAMA_TOKENS[fam]
        out.append({"id": "ollama-" + name[:-len(".jinja")], "set": "ollama-index", "file": place(idx, name),
                    "special_tokens": {"bos_token": bos, "eos_token": eos}, "kwargs": {},
                    "source": "github.com/ollama/ollama@v0.17.4 template/index.json"})
    out.append({"id": "chatml", "set": "project", "file": "../official/chatml.jinja",
                "special_tokens": {"bos_token": None, "eos_token": "<|im_end|>"}, "kwargs": {}, "source": "toolharness"})
    with open(os.path.join(HERE, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"templates": out}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("%d entries" % len(out))


if __name__ == "__main__":
    main()
