"""The Python peer of the benchmark: molprop's /health and /predict as a typical Python
deployment would serve them today, FastAPI on uvicorn (one worker) with RDKit doing the
chemistry. Same request and response shapes as the molprop component, so the load is
identical. Run: uvicorn app:app --port PORT --workers 1
"""


from fastapi import FastAPI
from peer import PredictionRequest, error, molecule_answer, smiles_or_error
from rdkit import RDLogger
from rdkit.Chem import Crippen, Descriptors, rdMolDescriptors

RDLogger.DisableLog("rdApp.*")

STRICT = rdMolDescriptors.NumRotatableBondsOptions.Strict

PROPERTIES = {
    "mol_weight": lambda m: round(Descriptors.MolWt(m), 4),
    "exact_mass": lambda m: round(Descriptors.ExactMolWt(m), 5),
    "formula": rdMolDescriptors.CalcMolFormula,
    "heavy_atoms": lambda m: m.GetNumHeavyAtoms(),
    "logp": lambda m: round(Crippen.MolLogP(m), 4),
    "mr": lambda m: round(Crippen.MolMR(m), 4),
    "tpsa": lambda m: round(rdMolDescriptors.CalcTPSA(m), 4),
    "hbd": rdMolDescriptors.CalcNumLipinskiHBD,
    "hba": rdMolDescriptors.CalcNumLipinskiHBA,
    "rotatable_bonds": lambda m: rdMolDescriptors.CalcNumRotatableBonds(m, STRICT),
    "rings": rdMolDescriptors.CalcNumRings,
    "aromatic_rings": rdMolDescriptors.CalcNumAromaticRings,
    "fraction_csp3": lambda m: round(rdMolDescriptors.CalcFractionCSP3(m), 4),
}

app = FastAPI()


@app.get("/health")
async def health():
    return {"status": "ok", "model": "molprop", "version": "1.2.0"}


@app.post("/predict")
async def predict(req: PredictionRequest):
    smiles, refused = smiles_or_error(req)
    if refused:
        return refused
    prop = req.data.get("property", "all")
    if prop != "all" and prop not in PROPERTIES:
        return error(400, f"unknown property `{prop}`", "invalid_field")

    def results_of(mol):
        if prop == "all":
            values = {code: f(mol) for code, f in PROPERTIES.items()}
            return {"prediction": values, "property_type": "all", "input": smiles}
        return {"prediction": PROPERTIES[prop](mol), "property_type": prop, "input": smiles}

    return molecule_answer("molprop", smiles, results_of)
