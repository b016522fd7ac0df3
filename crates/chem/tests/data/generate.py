"""Regenerates rdkit-samples.tsv: molecules from the public sample sets that ship inside the
RDKit wheel (NCI first 5K, a WEHI screening set, ChEMBL2321810, CDK2, cMet and EGFR ligands),
each with its canonical aromatic SMILES, a Kekule SMILES of the same molecule, and the values
RDKit computes. Run with RDKit installed (`pip install rdkit==2026.9.1`):

    python generate.py > rdkit-samples.tsv

A fixed random sample of 3000 molecules keeps the file small; the seed makes it repeatable.
"""
import csv
import os
import random
import sys

from rdkit import Chem, RDLogger, rdBase
from rdkit.Chem import Crippen, Descriptors
from rdkit.Chem import rdMolDescriptors as md

RDLogger.DisableLog("rdApp.*")
BASE = os.path.dirname(rdBase.__file__)
SAMPLE = 3000
COLUMNS = ["smiles", "kekule", "formula", "mol_weight", "exact_mass", "heavy_atoms", "logp", "mr",
           "tpsa", "hbd", "hba", "rotatable_bonds", "rings", "aromatic_rings", "fraction_csp3"]


def sources():
    for line in open(os.path.join(BASE, "Data/NCI/first_5K.smi")):
        if line.split():
            yield line.split()[0]
    for line in open(os.path.join(BASE, "Contrib/FreeWilson/data/CHEMBL2321810.smi")):
        if line.split():
            yield line.split()[0]
    for row in csv.reader(open(os.path.join(BASE, "Data/Pains/test_data/wehi_mols.csv"))):
        if row:
            yield row[0]
    for name in ["Contrib/Fastcluster/testdata/cdk2.sdf", "Contrib/FreeWilson/data/cmet_ligands.sdf",
                 "Contrib/PBF/testData/egfr.sdf"]:
        for mol in Chem.SDMolSupplier(os.path.join(BASE, name)):
            if mol:
                yield Chem.MolToSmiles(mol)


def row(mol):
    kek = Chem.Mol(mol)
    Chem.Kekulize(kek, clearAromaticFlags=True)
    return [Chem.MolToSmiles(mol), Chem.MolToSmiles(kek, kekuleSmiles=True), md.CalcMolFormula(mol),
            "%.4f" % Descriptors.MolWt(mol), "%.5f" % Descriptors.ExactMolWt(mol),
            str(mol.GetNumHeavyAtoms()), "%.4f" % Crippen.MolLogP(mol), "%.4f" % Crippen.MolMR(mol),
            "%.4f" % md.CalcTPSA(mol), str(md.CalcNumLipinskiHBD(mol)), str(md.CalcNumLipinskiHBA(mol)),
            str(md.CalcNumRotatableBonds(mol)), str(md.CalcNumRings(mol)),
            str(md.CalcNumAromaticRings(mol)), "%.4f" % md.CalcFractionCSP3(mol)]


def main():
    seen, mols = set(), []
    for smiles in sources():
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            continue
        canonical = Chem.MolToSmiles(mol)
        if canonical not in seen:
            seen.add(canonical)
            mols.append(mol)
    random.Random(20261122).shuffle(mols)
    out = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    out.writerow(COLUMNS)
    for mol in mols[:SAMPLE]:
        out.writerow(row(mol))


if __name__ == "__main__":
    main()
