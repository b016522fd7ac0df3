//! A SMARTS subset for atom typing: patterns that are trees (branches, no ring closures, no
//! recursion), matched with the pattern's first atom fixed on a given atom.
//!
//! Atom primitives: element symbols (aliphatic upper case, aromatic lower case), `#n`, `A`,
//! `a`, `*`, `Hn` (total hydrogens), `Xn` (total connections), `Dn` (explicit connections),
//! charges (`+`, `+n`, `-`, `-n`, `+0`); operators by precedence `!`, `&` (or juxtaposition),
//! `,`, `;`. Bonds: `-`, `=`, `#`, `:`, `~`, and unspecified (single or aromatic).
//!
//! Patterns are `'static` data so that a table of them can be compiled in (see
//! `crippen_table.rs`): a WebAssembly component starts from a fresh instance on every
//! request, so a table parsed at run time would be parsed again for every request.

mod parse;

use crate::molecule::{BondOrder, Molecule};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Prim {
    Element { number: u8, aromatic: Option<bool> },
    Aliphatic,
    Aromatic,
    Any,
    Hydrogens(u32),
    Connections(u32),
    Degree(u32),
    Charge(i8),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Expr {
    Prim(Prim),
    Not(&'static Expr),
    And(&'static [Expr]),
    Or(&'static [Expr]),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BondExpr {
    Single,
    Double,
    Triple,
    Aromatic,
    Any,
    SingleOrAromatic,
}

/// Atoms a pattern may have (the Wildman-Crippen types have at most 5). Small, because
/// matching compares an atom with every entry of a mapping this long.
const MAX_PATTERN_ATOMS: usize = 8;

/// A pattern: atoms in reading order, each after the first with its parent and bond.
#[derive(Debug, Clone, Copy)]
pub struct Pattern {
    pub(crate) atoms: &'static [Expr],
    pub(crate) parents: &'static [(usize, BondExpr)],
}

impl Pattern {
    /// Whether the pattern's first atom could be an atom of element `number` (false only
    /// when it certainly cannot): lets a table of patterns skip, per element, those that
    /// can never match.
    pub(crate) fn may_start_at_element(&self, number: u8) -> bool {
        fn may(e: &Expr, number: u8) -> bool {
            match e {
                Expr::Prim(Prim::Element { number: n, .. }) => *n == number,
                Expr::Prim(_) | Expr::Not(_) => true,
                Expr::And(xs) => xs.iter().all(|x| may(x, number)),
                Expr::Or(xs) => xs.iter().any(|x| may(x, number)),
            }
        }
        may(&self.atoms[0], number)
    }

    /// What the pattern's first atom requires of an atom, as far as its top-level
    /// conjunction says: a necessary condition, checked against an atom's [`AtomFacts`]
    /// before the whole pattern is tried; and sufficient too (with the element an index of
    /// patterns by element checked already) when that conjunction is all the atom's
    /// expression says ([`Requires::complete`]).
    pub(crate) fn first_atom_requires(&self) -> Requires {
        /// Sets `field` to `value`; a field said twice leaves the requirement incomplete
        /// (only one value is kept).
        fn set<T>(field: &mut Option<T>, value: T, complete: &mut bool) {
            *complete &= field.is_none();
            *field = Some(value);
        }
        fn add(e: &Expr, r: &mut Requires) {
            let complete = &mut r.complete;
            match e {
                Expr::Prim(p) => match *p {
                    Prim::Element {
                        aromatic: Some(a), ..
                    } => set(&mut r.aromatic, a, complete),
                    Prim::Aliphatic => set(&mut r.aromatic, false, complete),
                    Prim::Aromatic => set(&mut r.aromatic, true, complete),
                    Prim::Hydrogens(n) => set(&mut r.hydrogens, n, complete),
                    Prim::Connections(n) => set(&mut r.connections, n, complete),
                    Prim::Degree(n) => set(&mut r.degree, n, complete),
                    Prim::Charge(c) => set(&mut r.charge, c, complete),
                    Prim::Element { aromatic: None, .. } | Prim::Any => {}
                },
                Expr::And(xs) => xs.iter().for_each(|x| match x {
                    Expr::Prim(_) => add(x, r),
                    _ => r.complete = false,
                }),
                Expr::Or(_) | Expr::Not(_) => *complete = false,
            }
        }
        let mut r = Requires {
            complete: true,
            ..Requires::default()
        };
        add(&self.atoms[0], &mut r);
        r
    }

    /// Whether the pattern matches with its first atom on `atom`, the molecule's atoms
    /// described by `facts` ([`AtomFacts::all`]). Allocation-free: it runs for every atom
    /// against every type until one matches.
    pub(crate) fn matches_at(&self, mol: &Molecule, facts: &[AtomFacts], atom: usize) -> bool {
        eval(&self.atoms[0], &facts[atom]) && self.matches_around(mol, facts, atom)
    }

    /// Whether the rest of the pattern matches around `atom`, which is known to match its
    /// first atom.
    pub(crate) fn matches_around(&self, mol: &Molecule, facts: &[AtomFacts], atom: usize) -> bool {
        if self.atoms.len() == 1 {
            return true;
        }
        let mut mapping = [UNMAPPED; MAX_PATTERN_ATOMS];
        mapping[0] = atom;
        self.extend(mol, facts, &mut mapping, 1)
    }

    /// Maps pattern atoms `k..` (`k` below the pattern's length), the first `k` being
    /// mapped already and the rest [`UNMAPPED`] (as it leaves them when it fails), so "is
    /// this atom mapped already" is one comparison of the whole array rather than a loop
    /// over its first `k`. The last atom mapped ends the search without a call.
    fn extend(
        &self,
        mol: &Molecule,
        facts: &[AtomFacts],
        mapping: &mut [usize; MAX_PATTERN_ATOMS],
        k: usize,
    ) -> bool {
        let (parent, bond) = self.parents[k];
        let from = mapping[parent];
        for &b in &mol.adjacency[from] {
            let to = mol.bonds[b].other(from);
            let expected = match &self.atoms[k] {
                Expr::Prim(p) => prim(*p, &facts[to]),
                e => eval(e, &facts[to]),
            };
            if mapping.contains(&to) || !bond_ok(bond, mol.bonds[b].order) || !expected {
                continue;
            }
            mapping[k] = to;
            if k + 1 == self.atoms.len() || self.extend(mol, facts, mapping, k + 1) {
                return true;
            }
        }
        mapping[k] = UNMAPPED;
        false
    }
}

/// A pattern atom not mapped to an atom of the molecule (yet).
const UNMAPPED: usize = usize::MAX;

/// What a pattern's first atom requires (see [`Pattern::first_atom_requires`]); `None`:
/// nothing said.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Requires {
    /// Whether this is all the first atom's expression requires, its element aside.
    pub(crate) complete: bool,
    aromatic: Option<bool>,
    hydrogens: Option<u32>,
    connections: Option<u32>,
    degree: Option<u32>,
    charge: Option<i8>,
}

/// What the primitives of a pattern's atom test of one atom, computed once per atom of a
/// molecule rather than at every test: the hydrogen count alone walked the atom's
/// neighbours each time, and an atom is tested against hundreds of primitives while the
/// table types a molecule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AtomFacts {
    number: u8,
    aromatic: bool,
    hydrogens: u32,
    connections: u32,
    degree: u32,
    charge: i8,
}

impl AtomFacts {
    pub(crate) fn of(mol: &Molecule, i: usize) -> Self {
        let a = &mol.atoms[i];
        Self {
            number: a.element.number,
            aromatic: a.aromatic,
            hydrogens: mol.total_hydrogens(i),
            connections: connections(mol, i),
            degree: degree(mol, i),
            charge: a.charge,
        }
    }

    /// The facts of every atom of `mol`, in atom order.
    pub(crate) fn all(mol: &Molecule) -> Vec<Self> {
        (0..mol.atoms.len()).map(|i| Self::of(mol, i)).collect()
    }
}

/// SMARTS `D`: explicit connections.
fn degree(mol: &Molecule, i: usize) -> u32 {
    mol.adjacency[i].len() as u32
}

/// SMARTS `X`: total connections, implicit hydrogens included.
fn connections(mol: &Molecule, i: usize) -> u32 {
    degree(mol, i) + u32::from(mol.atoms[i].hydrogens)
}

impl Requires {
    /// False when the atom certainly fails the pattern's first atom.
    pub(crate) fn allows(&self, f: &AtomFacts) -> bool {
        self.aromatic.is_none_or(|x| x == f.aromatic)
            && self.hydrogens.is_none_or(|x| x == f.hydrogens)
            && self.connections.is_none_or(|x| x == f.connections)
            && self.degree.is_none_or(|x| x == f.degree)
            && self.charge.is_none_or(|x| x == f.charge)
    }
}

fn bond_ok(want: BondExpr, have: BondOrder) -> bool {
    match want {
        BondExpr::Single => have == BondOrder::Single,
        BondExpr::Double => have == BondOrder::Double,
        BondExpr::Triple => have == BondOrder::Triple,
        BondExpr::Aromatic => have == BondOrder::Aromatic,
        BondExpr::Any => true,
        BondExpr::SingleOrAromatic => matches!(have, BondOrder::Single | BondOrder::Aromatic),
    }
}

/// Whether the atom described by `f` satisfies `e`. Primitives directly under a `&` or `,`
/// are tested in place rather than through a call each: most expressions of a table are
/// one such list, and a call (with its deadline check in WebAssembly) cost more than the
/// test.
fn eval(e: &Expr, f: &AtomFacts) -> bool {
    match e {
        Expr::Prim(p) => prim(*p, f),
        Expr::Not(x) => !eval(x, f),
        Expr::And(xs) => xs.iter().all(|x| match x {
            Expr::Prim(p) => prim(*p, f),
            _ => eval(x, f),
        }),
        Expr::Or(xs) => xs.iter().any(|x| match x {
            Expr::Prim(p) => prim(*p, f),
            _ => eval(x, f),
        }),
    }
}

#[inline(always)]
fn prim(p: Prim, f: &AtomFacts) -> bool {
    match p {
        Prim::Element { number, aromatic } => {
            f.number == number && aromatic.is_none_or(|ar| ar == f.aromatic)
        }
        Prim::Aliphatic => !f.aromatic,
        Prim::Aromatic => f.aromatic,
        Prim::Any => true,
        Prim::Hydrogens(n) => f.hydrogens == n,
        Prim::Connections(n) => f.connections == n,
        Prim::Degree(n) => f.degree == n,
        Prim::Charge(c) => f.charge == c,
    }
}

#[cfg(test)]
mod tests;
