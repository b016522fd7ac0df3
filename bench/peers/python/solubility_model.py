"""The solubility model as Python runs it: RDKit computes the features (Morgan bits, radius 2,
2048 bits, and the same twelve descriptors as the component, by RDKit's own functions) and
onnxruntime runs the committed models/solubility/model.onnx. Shared by the FastAPI peer
(solubility_app.py) and the file scorer (score_file.py).

RDKit's fingerprint bits are not our featurizer's, so the predictions differ a little from the
component's; the work per molecule is the same kind.
"""

import pathlib

import numpy as np
import onnxruntime
from rdkit import RDLogger
from rdkit.Chem import Crippen, Descriptors, rdFingerprintGenerator, rdMolDescriptors

RDLogger.DisableLog("rdApp.*")

MODEL = pathlib.Path(__file__).resolve().parents[3] / "models" / "solubility" / "model.onnx"
session = onnxruntime.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
INPUT = session.get_inputs()[0].name
MORGAN = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
STRICT = rdMolDescriptors.NumRotatableBondsOptions.Strict
WIDTH = 2048 + 12


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


def predict(mols):
    """logS of each RDKit molecule in `mols`, in one onnxruntime call."""
    x = np.zeros((len(mols), WIDTH), dtype=np.float32)
    for i, m in enumerate(mols):
        x[i, :2048] = MORGAN.GetFingerprintAsNumPy(m)
        x[i, 2048:] = descriptors(m)
    return [float(v) for v in session.run(None, {INPUT: x})[0][:, 0]]
