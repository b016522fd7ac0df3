"""OpenAI's own Python client against runtime-host's OpenAI-compatible endpoints.

Run by tests/tests/models/llm_api/ with the environment target/test-python-openai
(tests/python/openai-requirements.txt). Called as

    openai_client.py BASE_URL LANGUAGE_MODEL EMBEDDING_MODEL QUESTION MAX_TOKENS

with the API token in $OPENAI_API_KEY, it makes the calls an OpenAI user's code makes, with
the client's default arguments, and prints what came back as one JSON object for the Rust
test to check: a chat completion at temperature 0, the same one streamed (every chunk's
text, and the usage the last chunk carries), embeddings (the client's default base64
encoding and plain floats) and the model list.
"""

import json
import sys

import openai


def main():
    base, language_model, embedding_model, question, max_tokens = sys.argv[1:]
    max_tokens = int(max_tokens)
    client = openai.OpenAI(base_url=f"{base}/v1", max_retries=0, timeout=120)
    messages = [{"role": "user", "content": question}]

    whole = client.chat.completions.create(
        model=language_model,
        messages=messages,
        max_tokens=max_tokens,
        temperature=0,
    )
    stream = client.chat.completions.create(
        model=language_model,
        messages=messages,
        max_tokens=max_tokens,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, finishes, usage = [], [], None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage.model_dump()
        for choice in chunk.choices:
            if choice.delta.content:
                pieces.append(choice.delta.content)
            if choice.finish_reason:
                finishes.append(choice.finish_reason)

    texts = ["The cat sat on the mat.", "Edge computing runs code near its users."]
    default = client.embeddings.create(model=embedding_model, input=texts)
    floats = client.embeddings.create(
        model=embedding_model, input=texts[0], encoding_format="float"
    )

    try:
        client.chat.completions.create(
            model="no-such-model", messages=messages, max_tokens=2
        )
        unknown = None
    except openai.NotFoundError as e:
        unknown = {"status": e.status_code, "message": str(e)}

    print(
        json.dumps(
            {
                "whole": {
                    "text": whole.choices[0].message.content,
                    "role": whole.choices[0].message.role,
                    "finish_reason": whole.choices[0].finish_reason,
                    "usage": whole.usage.model_dump(),
                    "model": whole.model,
                },
                "stream": {"pieces": pieces, "finishes": finishes, "usage": usage},
                "embeddings": {
                    "default": [d.embedding for d in default.data],
                    "float": floats.data[0].embedding,
                    "prompt_tokens": default.usage.prompt_tokens,
                },
                "models": sorted(m.id for m in client.models.list()),
                "unknown_model": unknown,
            }
        )
    )


if __name__ == "__main__":
    main()
