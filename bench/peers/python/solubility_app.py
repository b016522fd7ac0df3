"""The Python peer of the solubility benchmark: the committed models/solubility/model.onnx
served the way Python deployments usually serve a scikit-learn model exported to ONNX: FastAPI
on uvicorn (one worker), with RDKit and onnxruntime (solubility_model.py).

The component also checks the applicability domain (1,025 Tanimoto comparisons) on every
request; this peer does not.
Run: uvicorn solubility_app:app --port PORT --workers 1
"""

from fastapi import FastAPI
from peer import PredictionRequest, molecule_answer, smiles_or_error
from solubility_model import predict as solubility

app = FastAPI()


@app.get("/health")
async def health():
    return {"status": "ok", "model": "solubility", "version": "1.2.0"}


@app.post("/predict")
async def predict(req: PredictionRequest):
    smiles, refused = smiles_or_error(req)
    if refused:
        return refused

    def results_of(mol):
        return {"prediction": round(solubility([mol])[0], 4), "property_type": "logS",
                "unit": "log10(mol/L)", "input": smiles}

    return molecule_answer("solubility", smiles, results_of)
