"""Greedy-decoding reference for the host's language model, from an independent implementation.

llama.cpp (through llama-cpp-python, pinned in llm-reference-requirements.txt) reads the same
GGUF file the host runs and, for each of 20 chat prompts, writes down the prompt's tokens and
the first 32 tokens it chooses by greedy decoding (temperature 0, no repeat penalty), stopping
early at a token that ends the turn.

llama.cpp runs the file's weights expanded to 32 bits by its own quantize tool (ftype ALL_F32:
every weight exactly the value its 4-bit block encodes). With the 4-bit file as it is, llama.cpp
rounds every block of activations to 8 bits, and this model's few very large activations make
that rounding chaotic: llama.cpp's own logits move by up to 0.87 between reading a prompt at
once and token by token, so its greedy answers depend on its batch sizes. The host multiplies
the 4-bit weights with 32-bit activations (crates/host-capabilities/src/llm/quantized.rs),
the same arithmetic as llama.cpp on the expanded weights, to within 5e-5 in every logit. The prompts are written with the chat template stored in
the file, rendered by Jinja2. The host's tests hold `infer` to these tokens
(tests/data/llm-greedy.json), so the test command never builds llama.cpp; rerun this to
regenerate them:

    python3 -m venv /tmp/llama-ref
    /tmp/llama-ref/bin/pip install -r tests/python/llm-reference-requirements.txt
    /tmp/llama-ref/bin/python tests/python/llm_reference.py \
        .data/ai-models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf \
        tests/data/llm-greedy.json

The key/value cache is kept in 32-bit floats (llama.cpp's default is 16-bit) so that both
implementations attend with the same precision.
"""

import ctypes
import hashlib
import json
import pathlib
import sys
import tempfile

import jinja2
import llama_cpp
import numpy as np

TOKENS = 32
GGML_TYPE_F32 = 0
LLAMA_FTYPE_ALL_F32 = 0

LONG = (
    "Here are my notes from the lab meeting. We measured the solubility of twelve small "
    "molecules in water at room temperature, then again at forty degrees. Aspirin, caffeine "
    "and paracetamol dissolved faster when warm; naphthalene barely changed. Two samples were "
    "contaminated, so we repeated them on Thursday with fresh solvent and new glassware. The "
    "balance drifted by a few milligrams during the afternoon, which we corrected with a "
    "calibration weight every hour. Next week we will add ethanol as a co-solvent and compare "
    "the curves. Please write a short summary of these notes for the group, in two sentences."
)

CHATS = [
    [{"role": "user", "content": "Hello! Who are you?"}],
    [{"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "user", "content": "Give me three tips for sleeping better."}],
    [{"role": "user", "content": "Translate 'good morning' into French."}],
    [{"role": "user", "content": "What is a molecule?"}],
    [{"role": "user", "content": "List the planets of the solar system."}],
    [{"role": "user", "content": "Explain photosynthesis to a child."}],
    [{"role": "user", "content": "Write a Python function that adds two numbers."}],
    [{"role": "user", "content": "Why is the sky blue?"}],
    [{"role": "user", "content": "Tell me a joke about computers."}],
    [{"role": "user", "content": "What is the boiling point of water in Celsius?"}],
    [{"role": "system", "content": "You are a terse assistant. Answer in one word."},
     {"role": "user", "content": "What colour is grass?"}],
    [{"role": "system", "content": "You are a chemistry tutor."},
     {"role": "user", "content": "What does pH measure?"}],
    [{"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "Hello! How can I help you today?"},
     {"role": "user", "content": "Suggest a name for a cat."}],
    [{"role": "user", "content": "Count from 1 to 10."}],
    [{"role": "user", "content": "Summarize: The quick brown fox jumps over the lazy dog."}],
    [{"role": "user", "content": LONG}],
    [{"role": "user", "content": "Numbers: 3.14159, 2.71828 and 1,000,000. Which is largest?"}],
    [{"role": "user", "content": "Caf\u00e9, na\u00efve, \u00fcber and \u65e5\u672c: say something about these words."}],
]


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} MODEL.gguf OUT.json")
    path, out = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        expanded = str(pathlib.Path(tmp) / "f32.gguf")
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = LLAMA_FTYPE_ALL_F32
        params.allow_requantize = True
        if llama_cpp.llama_model_quantize(path.encode(), expanded.encode(), ctypes.byref(params)):
            sys.exit("llama.cpp could not expand the weights")
        cases, ends = run(expanded)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    json.dump({"model_sha256": digest,
               "implementation": f"llama-cpp-python {llama_cpp.__version__}, weights expanded to F32",
               "end_tokens": sorted(ends), "cases": cases},
              open(out, "w"), indent=1, ensure_ascii=False)
    print(f"wrote {len(cases)} cases to {out}")


def run(path):
    llm = llama_cpp.Llama(
        model_path=path, n_ctx=2048, n_batch=512, n_threads=2, verbose=False, logits_all=True,
        type_k=GGML_TYPE_F32, type_v=GGML_TYPE_F32,
    )
    template = jinja2.Environment().from_string(llm.metadata["tokenizer.chat_template"])
    ends = {
        t for t in range(llm.n_vocab())
        if llm.detokenize([t], special=True) in (b"<|im_end|>", b"<|endoftext|>")
    } | {llm.token_eos()}
    cases = []
    for chat in CHATS:
        prompt = template.render(messages=chat, add_generation_prompt=True)
        tokens = llm.tokenize(prompt.encode(), add_bos=False, special=True)
        llm.reset()
        llm.eval(tokens)
        chosen = []
        for _ in range(TOKENS):
            token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
            if token in ends:
                break
            chosen.append(token)
            llm.eval([token])
        text = llm.detokenize(chosen).decode("utf-8", errors="replace")
        cases.append({"messages": chat, "prompt": prompt, "prompt_tokens": tokens,
                      "greedy_tokens": chosen, "greedy_text": text})
        print(f"{len(tokens):4} prompt tokens -> {text!r}")
    return cases, ends


if __name__ == "__main__":
    main()
