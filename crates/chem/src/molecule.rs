//! The molecular graph.

use crate::element::Element;
use std::cell::OnceCell;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BondOrder {
    Single,
    Double,
    Triple,
    Quadruple,
    Aromatic,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Atom {
    pub element: &'static Element,
    pub isotope: Option<u16>,
    pub charge: i8,
    pub aromatic: bool,
    /// Written in brackets: the hydrogen count is explicit and no implicit ones are added.
    pub bracket: bool,
    /// Hydrogens attached but not present as atoms (bracket count, or implicit ones).
    pub hydrogens: u8,
    /// 1-based position in the SMILES string, for messages.
    pub position: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bond {
    pub a: usize,
    pub b: usize,
    pub order: BondOrder,
    /// Order in the Kekulé structure (aromatic bonds resolved to 1 or 2).
    pub kekule: u8,
}

impl Bond {
    pub fn other(&self, atom: usize) -> usize {
        if self.a == atom { self.b } else { self.a }
    }
}

/// The bonds of one atom. Up to four are kept inline: nearly every atom has at most four
/// (every hydrogen has one), so building a molecule, and its copy with explicit hydrogens,
/// allocates per molecule instead of per atom (measured: allocation was a quarter of the
/// chemistry's time, each atom's list its own allocation).
pub type BondList = smallvec::SmallVec<[usize; 4]>;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Molecule {
    pub atoms: Vec<Atom>,
    pub bonds: Vec<Bond>,
    /// For each atom, its bonds (indices into `bonds`).
    pub adjacency: Vec<BondList>,
    /// The symmetrized SSSR, computed on first use: aromaticity, ring counts, TPSA and
    /// rotatable bonds all need it, and it is the most expensive graph computation here.
    /// Filled by [`Molecule::rings`] (in `rings.rs`, where rings are found).
    pub(crate) rings: OnceCell<Vec<Ring>>,
}

/// A ring as the bonds and the atoms it consists of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    pub bonds: Vec<usize>,
    pub atoms: Vec<usize>,
}

impl Molecule {
    /// An empty molecule with room for `atoms` atoms and `bonds` bonds, so that building
    /// it does not regrow its lists.
    pub fn with_capacity(atoms: usize, bonds: usize) -> Self {
        Self {
            atoms: Vec::with_capacity(atoms),
            bonds: Vec::with_capacity(bonds),
            adjacency: Vec::with_capacity(atoms),
            rings: OnceCell::new(),
        }
    }

    /// A copy of the atoms and bonds without the ring set: for a copy about to gain atoms
    /// or bonds, which would drop it anyway.
    pub fn clone_graph(&self) -> Self {
        Self {
            atoms: self.atoms.clone(),
            bonds: self.bonds.clone(),
            adjacency: self.adjacency.clone(),
            rings: OnceCell::new(),
        }
    }

    pub fn add_atom(&mut self, atom: Atom) -> usize {
        self.rings = OnceCell::new();
        self.atoms.push(atom);
        self.adjacency.push(BondList::new());
        self.atoms.len() - 1
    }

    pub fn bond_between(&self, a: usize, b: usize) -> Option<usize> {
        self.adjacency[a]
            .iter()
            .copied()
            .find(|&i| self.bonds[i].other(a) == b)
    }

    pub fn add_bond(&mut self, a: usize, b: usize, order: BondOrder) -> usize {
        self.rings = OnceCell::new();
        let kekule = match order {
            BondOrder::Single | BondOrder::Aromatic => 1,
            BondOrder::Double => 2,
            BondOrder::Triple => 3,
            BondOrder::Quadruple => 4,
        };
        self.bonds.push(Bond {
            a,
            b,
            order,
            kekule,
        });
        let i = self.bonds.len() - 1;
        self.adjacency[a].push(i);
        self.adjacency[b].push(i);
        i
    }

    /// Neighbouring atoms of `atom`.
    pub fn neighbours(&self, atom: usize) -> impl Iterator<Item = usize> + '_ {
        self.adjacency[atom]
            .iter()
            .map(move |&b| self.bonds[b].other(atom))
    }

    /// Hydrogens on `atom`: attached counts plus explicit `[H]` neighbour atoms.
    pub fn total_hydrogens(&self, atom: usize) -> u32 {
        let explicit = self
            .neighbours(atom)
            .filter(|&n| self.atoms[n].element.number == 1)
            .count();
        u32::from(self.atoms[atom].hydrogens) + explicit as u32
    }

    /// Sum of Kekulé bond orders at `atom`.
    pub fn bond_valence(&self, atom: usize) -> u32 {
        self.adjacency[atom]
            .iter()
            .map(|&b| u32::from(self.bonds[b].kekule))
            .sum()
    }

    pub fn total_charge(&self) -> i32 {
        self.atoms.iter().map(|a| i32::from(a.charge)).sum()
    }
}
