"""The Python peer of the solubility benchmark: the committed models/solubility/model.onnx
served the way Python deployments usually serve a scikit-learn model exported to ONNX: FastAPI
on uvicorn (one worker), RDKit computing the features (Morgan bits, radius 2, 2048 bits, and the
same twelve descriptors, by RDKit's own functions) and onnxruntime running the graph.

RDKit's fingerprint bits are not our featurizer's, so the predictions differ a little from the
component's; the work per request is the same kind. The component also checks the
applicability domain (1,025 Tanimoto comparisons) on every request; this peer does not.
Run: uvicorn solubility_app:app --port PORT --workers 1
"""

import pathlib

import numpy as np
import onnxruntime
from fastapi import FastAPI
from peer import PredictionRequest, molecule_answer, smiles_or_error
from rdkit import RDLogger
from rdkit.Chem import Crippen, Descriptors, rdFingerprintGenerator, rdMolDescriptors

RDLogger.DisableLog("rdApp.*")

MODEL = pathlib.Path(__file__).resolve().parents[3] / "models" / "solubility" / "model.onnx"
session = onnxruntime.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
INPUT = session.get_inputs()[0].name
MORGAN = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
STRICT = rdMolDescriptors.NumRotatableBondsOptions.Strict


def descriptors(m):
    heavy = m.GetNumHeavyAtoms()
    aromatic = sum(1 for a in m.GetAtoms() if a.GetIsAromatic())
    return [
        Descriptors.MolWt(m), Crippen.MolLogP(m), Crippen.MolMR(m), rdMolDescriptors.CalcTPSA(m),
        rdMolDescriptors.CalcNumLipinskiHBD(m), rdMolDescriptors.CalcNumLipinskiHBA(m),
        rdMolDescriptors.CalcNumRotatableBonds(m, STRICT), rdMolDescriptors.CalcNumRings(m),
        rdMolDescriptors.CalcNumAromaticRings(m), heavy, rdMolDescriptors.CalcFractionCSP3(m),
        aromatic / heavy if heavy else 0.0,
    ]


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
        x = np.zeros((1, 2060), dtype=np.float32)
        x[0, :2048] = MORGAN.GetFingerprintAsNumPy(mol)
        x[0, 2048:] = descriptors(mol)
        value = float(session.run(None, {INPUT: x})[0][0, 0])
        return {"prediction": round(value, 4), "property_type": "logS",
                "unit": "log10(mol/L)", "input": smiles}

    return molecule_answer("solubility", smiles, results_of)
