"""The Python side of the bench's library section: a SMILES file scored the way a chemist's
script usually does it, one process, RDKit parsing each line, results written as CSV.

    python score_file.py logp LIBRARY.smi OUT.csv        # RDKit Crippen logP (molprop's logp)
    python score_file.py solubility LIBRARY.smi OUT.csv  # RDKit + onnxruntime, 256 per call

Lines are `SMILES [name]`. A line RDKit cannot parse gets an empty prediction and an error, as
`runtime-host predict` writes it. Prints the rows written and the rate on standard output.
"""

import csv
import sys
import time

from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen

RDLogger.DisableLog("rdApp.*")

BATCH = 256


def rows(path):
    """(id, SMILES) of each non-empty line; the id is the name, else `row<n>`."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            parts = line.split()
            if parts:
                yield (parts[1] if len(parts) > 1 else f"row{n}"), parts[0]


def logp(batch):
    for ident, smiles in batch:
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            yield ident, smiles, "", "invalid SMILES"
        else:
            yield ident, smiles, round(Crippen.MolLogP(mol), 4), ""


def solubility(batch):
    from solubility_model import predict

    parsed = [(i, s, Chem.MolFromSmiles(s)) for i, s in batch]
    good = [m for _, _, m in parsed if m is not None]
    values = iter(predict(good) if good else [])
    for ident, smiles, mol in parsed:
        if mol is None:
            yield ident, smiles, "", "invalid SMILES"
        else:
            yield ident, smiles, round(next(values), 4), ""


def main():
    model, library, output = sys.argv[1:4]
    score = {"logp": logp, "solubility": solubility}[model]
    started = time.perf_counter()
    written = 0
    with open(output, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "input", "prediction", "error"])
        batch = []
        for row in rows(library):
            batch.append(row)
            if len(batch) == BATCH:
                written += len(batch)
                writer.writerows(score(batch))
                batch = []
        if batch:
            written += len(batch)
            writer.writerows(score(batch))
    seconds = time.perf_counter() - started
    print(f"{written} molecules in {seconds:.2f} s ({written / seconds:.0f} molecules/s)")


if __name__ == "__main__":
    main()
