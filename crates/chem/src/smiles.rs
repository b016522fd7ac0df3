//! A SMILES reader (OpenSMILES, as drug-like inputs use it).
//!
//! Reads the string once, left to right, keeping the previous atom, a branch stack and the
//! open ring closures. Stereo marks (`@`, `@@`, `/`, `\`) are read and ignored: none of our
//! descriptors depends on stereochemistry. After the graph is built, [`crate::kekule`]
//! resolves aromatic bonds and assigns implicit hydrogens.

use crate::molecule::{Atom, BondOrder, Molecule};
use crate::{Error, kekule};
use std::collections::BTreeMap;

mod atoms;

use atoms::{organic, supported};

/// Most atoms accepted: far beyond any drug-like molecule, and keeps work bounded.
pub const MAX_ATOMS: usize = 2000;

/// Parses `smiles` into a kekulized molecule with implicit hydrogens.
pub fn parse(smiles: &str) -> Result<Molecule, Error> {
    let mut mol = Parser::new(smiles).run()?;
    kekule::assign(&mut mol)?;
    crate::aromaticity::perceive(&mut mol);
    Ok(mol)
}

/// Number of SMILES tokens (atoms, bonds, ring closures, branches, dots) in `smiles`, the
/// unit the model's 1024-token limit is stated in.
pub fn token_count(smiles: &str) -> usize {
    let b = smiles.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < b.len() {
        i += match b[i] {
            b'[' => b[i..]
                .iter()
                .position(|&c| c == b']')
                .map_or(b.len() - i, |p| p + 1),
            b'%' => 3,
            b'C' if b.get(i + 1) == Some(&b'l') => 2,
            b'B' if b.get(i + 1) == Some(&b'r') => 2,
            _ => 1,
        };
        n += 1;
    }
    n
}

struct RingOpen {
    atom: usize,
    bond: Option<BondOrder>,
    position: usize,
}

struct Parser<'a> {
    chars: Vec<char>,
    i: usize,
    mol: Molecule,
    prev: Option<usize>,
    bond: Option<(BondOrder, usize)>,
    branches: Vec<(usize, usize)>,
    rings: BTreeMap<u16, RingOpen>,
    _src: &'a str,
}

/// Atoms (and bonds) a parser makes room for at once; larger molecules grow as they parse.
const PRESIZED_ATOMS: usize = 128;

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        // Room for as many atoms and bonds as the SMILES has characters (it has no more),
        // up to a drug-like molecule's worth: a long hostile string must not reserve memory
        // in proportion to its length before its first error.
        let room = PRESIZED_ATOMS.min(src.len());
        Self {
            chars: src.chars().collect(),
            i: 0,
            mol: Molecule::with_capacity(room, room),
            prev: None,
            bond: None,
            branches: Vec::new(),
            rings: BTreeMap::new(),
            _src: src,
        }
    }

    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn pos(&self) -> usize {
        self.i + 1
    }

    fn run(mut self) -> Result<Molecule, Error> {
        if self.chars.is_empty() {
            return Err(Error::new("empty SMILES"));
        }
        while let Some(c) = self.peek(0) {
            let at = self.pos();
            match c {
                '[' => {
                    let atom = self.bracket_atom()?;
                    self.attach(atom)?;
                }
                '-' | '=' | '#' | '$' | ':' | '/' | '\\' => {
                    if self.bond.is_some() {
                        return Err(Error::at(at, format!("two bonds in a row (`{c}`)")));
                    }
                    if self.prev.is_none() {
                        return Err(Error::at(
                            at,
                            format!("bond `{c}` without an atom before it"),
                        ));
                    }
                    let order = match c {
                        '=' => BondOrder::Double,
                        '#' => BondOrder::Triple,
                        '$' => BondOrder::Quadruple,
                        ':' => BondOrder::Aromatic,
                        _ => BondOrder::Single,
                    };
                    self.bond = Some((order, at));
                    self.i += 1;
                }
                '(' => {
                    let Some(prev) = self.prev else {
                        return Err(Error::at(at, "branch `(` without an atom before it"));
                    };
                    if self.bond.is_some() {
                        return Err(Error::at(at, "bond before `(`"));
                    }
                    self.branches.push((prev, at));
                    self.i += 1;
                }
                ')' => {
                    let Some((atom, _)) = self.branches.pop() else {
                        return Err(Error::at(at, "unmatched `)`"));
                    };
                    if self.bond.is_some() {
                        return Err(Error::at(at, "bond without an atom after it"));
                    }
                    if self.chars.get(self.i.wrapping_sub(1)) == Some(&'(') {
                        return Err(Error::at(at, "empty branch `()`"));
                    }
                    self.prev = Some(atom);
                    self.i += 1;
                }
                '.' => {
                    if self.bond.is_some() || self.prev.is_none() {
                        return Err(Error::at(at, "`.` must separate two complete parts"));
                    }
                    if !self.branches.is_empty() {
                        return Err(Error::at(at, "`.` inside a branch"));
                    }
                    self.prev = None;
                    self.i += 1;
                }
                '0'..='9' | '%' => self.ring_closure()?,
                '*' => return Err(Error::at(at, "wildcard atom `*` is not supported")),
                c if c.is_whitespace() => {
                    return Err(Error::at(
                        at,
                        "unexpected whitespace (send one SMILES string)",
                    ));
                }
                c => match organic(c, self.peek(1)) {
                    Some((symbol, aromatic, len)) => {
                        let element = supported(symbol, at)?;
                        self.i += len;
                        self.attach(Atom {
                            element,
                            isotope: None,
                            charge: 0,
                            aromatic,
                            bracket: false,
                            hydrogens: 0,
                            position: at,
                        })?;
                    }
                    None if c.is_ascii_alphabetic() => {
                        return Err(Error::at(
                            at,
                            format!(
                                "`{c}` is not an organic-subset atom; write other elements in brackets, e.g. [{c}]"
                            ),
                        ));
                    }
                    None => return Err(Error::at(at, format!("unexpected character `{c}`"))),
                },
            }
        }
        if let Some((_, at)) = self.branches.last() {
            return Err(Error::at(*at, "unclosed branch `(`"));
        }
        if let Some((digit, open)) = self.rings.iter().next() {
            return Err(Error::at(
                open.position,
                format!("ring closure {digit} is never closed"),
            ));
        }
        if let Some((_, at)) = self.bond {
            return Err(Error::at(at, "bond without an atom after it"));
        }
        Ok(self.mol)
    }

    fn attach(&mut self, atom: Atom) -> Result<(), Error> {
        if self.mol.atoms.len() >= MAX_ATOMS {
            return Err(Error::at(
                atom.position,
                format!("more than {MAX_ATOMS} atoms"),
            ));
        }
        let aromatic = atom.aromatic;
        let idx = self.mol.add_atom(atom);
        if let Some(prev) = self.prev {
            let order = match self.bond.take() {
                Some((o, _)) => o,
                None if aromatic && self.mol.atoms[prev].aromatic => BondOrder::Aromatic,
                None => BondOrder::Single,
            };
            self.mol.add_bond(prev, idx, order);
        }
        self.prev = Some(idx);
        Ok(())
    }

    fn ring_closure(&mut self) -> Result<(), Error> {
        let at = self.pos();
        let Some(prev) = self.prev else {
            return Err(Error::at(at, "ring closure without an atom before it"));
        };
        let digit: u16 = if self.peek(0) == Some('%') {
            match (self.peek(1), self.peek(2)) {
                (Some(a), Some(b)) if a.is_ascii_digit() && b.is_ascii_digit() => {
                    self.i += 3;
                    (a as u16 - '0' as u16) * 10 + (b as u16 - '0' as u16)
                }
                _ => return Err(Error::at(at, "`%` must be followed by two digits")),
            }
        } else {
            self.i += 1;
            self.chars[self.i - 1] as u16 - '0' as u16
        };
        let bond = self.bond.take().map(|(o, _)| o);
        match self.rings.remove(&digit) {
            None => {
                self.rings.insert(
                    digit,
                    RingOpen {
                        atom: prev,
                        bond,
                        position: at,
                    },
                );
            }
            Some(open) => {
                if open.atom == prev {
                    return Err(Error::at(
                        at,
                        format!("ring closure {digit} bonds an atom to itself"),
                    ));
                }
                if self.mol.bond_between(open.atom, prev).is_some() {
                    return Err(Error::at(
                        at,
                        format!("ring closure {digit} duplicates an existing bond"),
                    ));
                }
                let order = match (open.bond, bond) {
                    (Some(a), Some(b)) if a != b => {
                        return Err(Error::at(
                            at,
                            format!("ring closure {digit} has conflicting bond orders"),
                        ));
                    }
                    (Some(o), _) | (None, Some(o)) => o,
                    (None, None)
                        if self.mol.atoms[open.atom].aromatic && self.mol.atoms[prev].aromatic =>
                    {
                        BondOrder::Aromatic
                    }
                    (None, None) => BondOrder::Single,
                };
                self.mol.add_bond(open.atom, prev, order);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
