"""What the Python peers share: the request body, the error body, reading the SMILES of a
text request and answering it, written the way a FastAPI service usually writes them."""

import time

from fastapi.responses import JSONResponse
from pydantic import BaseModel


class PredictionRequest(BaseModel):
    input_type: str
    data: dict


def error(status, message, code):
    body = {"success": False, "error": message, "error_code": code}
    return JSONResponse(status_code=status, content=body)


def smiles_or_error(req):
    """(SMILES, None) for a valid text request, else (None, the 400 answer)."""
    if req.input_type != "text":
        message = f"input_type `{req.input_type}` is not supported"
        return None, error(400, message, "unsupported_input_type")
    smiles = req.data.get("text") or req.data.get("smiles")
    if not isinstance(smiles, str) or not smiles.strip():
        return None, error(400, "missing field `data.text`", "missing_field")
    return smiles.strip(), None


def molecule_answer(model_name, smiles, results_of):
    """The prediction response for one SMILES: `results_of(mol)` on the molecule RDKit parsed,
    or success false when it cannot; timed from parsing on, as the product times it."""
    from rdkit import Chem  # the chemistry peers' venv has RDKit; the embedding peer's not

    started = time.perf_counter()
    mol = Chem.MolFromSmiles(smiles)
    return {
        "success": mol is not None,
        "model_name": model_name,
        "results": results_of(mol) if mol is not None else {},
        "computation_time_ms": (time.perf_counter() - started) * 1000.0,
        "error_message": None if mol is not None else "invalid SMILES",
    }
