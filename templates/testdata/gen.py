#!/usr/bin/env python3
"""Regenerates golden/<family>/<conversation>.txt (or .err) with the real
Jinja2 engine, configured exactly as official/render.py (a copy of
/work/shared/templates/render.py) configures it, i.e. as transformers'
apply_chat_template does. Needs python3-jinja2. Run from this directory:

    python3 gen.py

Dates are fixed at 2025-03-14T09:26:53 (render.py's FIXED_NOW). The Go
tests never run this; they read the committed goldens.
"""
import copy
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "official"))
import render  # noqa: E402

FAMILIES = {
    "qwen2.5": ("Qwen-Qwen2.5-7B-Instruct.jinja", None, "<|im_end|>"),
    "qwen3": ("Qwen-Qwen3-0.6B.jinja", None, "<|im_end|>"),
    "qwen3-coder": ("Qwen3-Coder.jinja", None, "<|im_end|>"),
    "hermes3": ("NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "<|begin_of_text|>", "<|im_end|>"),
    "llama3.1": ("meta-llama-Llama-3.1-8B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>"),
    "llama3.2": ("meta-llama-Llama-3.2-3B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>"),
    "mistral-nemo": ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "<s>", "</s>"),
    "mistral-small3": ("mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja", "<s>", "</s>"),
    "gpt-oss": ("openai-gpt-oss-120b.jinja", "<|startoftext|>", "<|return|>"),
    "phi4-mini": ("microsoft-Phi-4-mini-instruct.gguf.jinja", "<|endoftext|>", "<|endoftext|>"),
    "granite3": ("ibm-granite-granite-3.3-2B-Instruct.jinja", "<|end_of_text|>", "<|end_of_text|>"),
    "gemma3": ("google-gemma-3-it.ollama-index.jinja", "<bos>", "<eos>"),
    "chatml": ("chatml.jinja", None, "<|im_end|>"),
}


def adapt(family, conv):
    """The caller conventions each template expects (documented in docs/templates.md)."""
    msgs = copy.deepcopy(conv["messages"])
    for m in msgs:
        if family == "gpt-oss" and "reasoning_content" in m:
            m["thinking"] = m.pop("reasoning_content")
    if family == "phi4-mini" and conv.get("tools") and msgs and msgs[0]["role"] == "system":
        msgs[0]["tools"] = json.dumps([t["function"] for t in conv["tools"]], ensure_ascii=False)
    return msgs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    convs = json.load(open(os.path.join(here, "conversations.json"), encoding="utf-8"))["conversations"]
    for fam, (file, bos, eos) in FAMILIES.items():
        src = open(os.path.join(here, "official", file), encoding="utf-8", newline="").read()
        tmpl = render.compile_template(src)
        entry = {"special_tokens": {"bos_token": bos, "eos_token": eos}}
        out = os.path.join(here, "golden", fam)
        os.makedirs(out, exist_ok=True)
        for c in convs:
            ok, text = render.try_render(tmpl, entry, c, adapt(fam, c))
            for ext in (".txt", ".err"):
                p = os.path.join(out, c["id"] + ext)
                if os.path.exists(p):
                    os.remove(p)
            with open(os.path.join(out, c["id"] + (".txt" if ok else ".err")), "w", encoding="utf-8", newline="") as f:
                f.write(text)
    print("rendered %d families x %d conversations with jinja2 %s" % (len(FAMILIES), len(convs), render.jinja2.__version__))


if __name__ == "__main__":
    main()
