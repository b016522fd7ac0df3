//! Molecules from SMILES, and descriptors computed on them.
//!
//! - [`smiles::parse`] reads OpenSMILES as drug-like inputs use it (organic subset and bracket
//!   atoms, aromatic and Kekulé forms, charges, isotopes, explicit hydrogens, ring closures
//!   including `%nn`, branches, stereo marks, disconnected parts) into a [`Molecule`], with
//!   aromatic systems kekulized and implicit hydrogens assigned ([`kekule`]), then aromaticity
//!   perceived afresh in RDKit's model ([`aromaticity`]), so both SMILES forms agree;
//! - [`rings`] finds the ring count and the smallest set of smallest rings;
//! - [`fingerprint`] folds Morgan (ECFP-style) circular fingerprints and compares them;
//!   [`features`] builds model input vectors (fingerprint bits, then named descriptors);
//! - [`descriptors`] computes formula, masses, atom, donor/acceptor and ring counts;
//!   [`rotatable`] counts rotatable bonds; [`tpsa`] sums Ertl's polar surface contributions;
//!   [`crippen`] types atoms ([`smarts`]) for Wildman-Crippen logP and molar refractivity;
//! - [`depict`] lays a molecule out in 2D and draws it as SVG;
//! - [`molfile`] reads the records of SD files (V2000 and V3000) into SMILES, written by
//!   [`write`].
//!
//! Plain Rust without I/O: runs in the `molprop` component and in native tests alike. No
//! input may panic or run unbounded: every failure is an [`Error`] saying what and where.

pub mod aromaticity;
pub mod crippen;
pub mod depict;
pub mod descriptors;
pub mod element;
pub mod features;
pub mod fingerprint;
pub mod kekule;
pub mod molecule;
pub mod molfile;
pub mod rings;
pub mod rotatable;
pub mod smarts;
pub mod smiles;
pub mod tpsa;
pub mod write;

pub use molecule::{Atom, Bond, BondOrder, Molecule};

/// Why a SMILES string could not become a molecule. Positions are 1-based characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    /// The 1-based character the message names, where it names one (the console points
    /// at it under the input).
    pub position: Option<usize>,
}

impl Error {
    pub fn at(position: usize, message: impl std::fmt::Display) -> Self {
        Self {
            message: format!("{message} at position {position}"),
            position: Some(position),
        }
    }

    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            position: None,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
