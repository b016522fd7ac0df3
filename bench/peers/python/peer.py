"""What both Python peers share: the request body, the error body, and reading the SMILES of a
text request, written the way a FastAPI service usually writes them."""

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
