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

use crate::element;
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

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .parse()
            .ok()
    }
    fn err(&self, what: &str) -> String {
        format!(
            "{what} at {} in `{}`",
            self.i + 1,
            String::from_utf8_lossy(self.s)
        )
    }

    fn element(&mut self, aromatic_allowed: bool) -> Option<Prim> {
        let c = self.peek()?;
        if c.is_ascii_uppercase() {
            let two = self
                .s
                .get(self.i + 1)
                .filter(|n| n.is_ascii_lowercase())
                .map(|n| format!("{}{}", c as char, *n as char));
            if let Some(sym) = two.filter(|s| element::is_element_symbol(s)) {
                self.i += 2;
                return Some(Prim::Element {
                    number: number_of(&sym)?,
                    aromatic: Some(false),
                });
            }
            if c == b'H' || c == b'X' || c == b'D' || c == b'A' {
                return None;
            }
            self.i += 1;
            return Some(Prim::Element {
                number: number_of(&(c as char).to_string())?,
                aromatic: Some(false),
            });
        }
        if aromatic_allowed && b"cnops".contains(&c) {
            self.i += 1;
            let sym = (c as char).to_ascii_uppercase().to_string();
            return Some(Prim::Element {
                number: number_of(&sym)?,
                aromatic: Some(true),
            });
        }
        None
    }

    fn primitive(&mut self) -> Result<Expr, String> {
        let c = self
            .peek()
            .ok_or_else(|| self.err("expression ends early"))?;
        let prim = match c {
            b'!' => {
                self.i += 1;
                return Ok(Expr::Not(Box::leak(Box::new(self.primitive()?))));
            }
            b'#' => {
                self.i += 1;
                let n = self
                    .number()
                    .ok_or_else(|| self.err("`#` needs a number"))?;
                Prim::Element {
                    number: n as u8,
                    aromatic: None,
                }
            }
            b'A' => {
                self.i += 1;
                Prim::Aliphatic
            }
            b'a' => {
                self.i += 1;
                Prim::Aromatic
            }
            b'*' => {
                self.i += 1;
                Prim::Any
            }
            b'H' | b'X' | b'D' => {
                self.i += 1;
                let n = self.number().unwrap_or(1);
                match c {
                    b'H' => Prim::Hydrogens(n),
                    b'X' => Prim::Connections(n),
                    _ => Prim::Degree(n),
                }
            }
            b'+' | b'-' => {
                self.i += 1;
                let unit: i32 = if c == b'+' { 1 } else { -1 };
                let mut charge = unit;
                if let Some(n) = self.number() {
                    charge = unit * n as i32;
                } else {
                    while self.peek() == Some(c) {
                        self.i += 1;
                        charge += unit;
                    }
                }
                Prim::Charge(charge as i8)
            }
            _ => self
                .element(true)
                .ok_or_else(|| self.err("unknown atom primitive"))?,
        };
        Ok(Expr::Prim(prim))
    }

    /// `;`-separated, of `,`-separated, of `&`/juxtaposed primitives.
    fn expression(&mut self) -> Result<Expr, String> {
        let mut lows = vec![self.or_expr()?];
        while self.peek() == Some(b';') {
            self.i += 1;
            lows.push(self.or_expr()?);
        }
        Ok(if lows.len() == 1 {
            lows.pop().unwrap()
        } else {
            Expr::And(lows.leak())
        })
    }

    fn or_expr(&mut self) -> Result<Expr, String> {
        let mut alts = vec![self.and_expr()?];
        while self.peek() == Some(b',') {
            self.i += 1;
            alts.push(self.and_expr()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap()
        } else {
            Expr::Or(alts.leak())
        })
    }

    fn and_expr(&mut self) -> Result<Expr, String> {
        let mut all = vec![self.primitive()?];
        loop {
            match self.peek() {
                Some(b'&') => {
                    self.i += 1;
                    all.push(self.primitive()?);
                }
                Some(b';' | b',' | b']') | None => break,
                Some(_) => all.push(self.primitive()?),
            }
        }
        Ok(if all.len() == 1 {
            all.pop().unwrap()
        } else {
            Expr::And(all.leak())
        })
    }

    fn atom(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some(b'[') => {
                self.i += 1;
                let e = self.expression()?;
                if self.peek() != Some(b']') {
                    return Err(self.err("expected `]`"));
                }
                self.i += 1;
                Ok(e)
            }
            Some(b'a') => {
                self.i += 1;
                Ok(Expr::Prim(Prim::Aromatic))
            }
            Some(b'A') => {
                self.i += 1;
                Ok(Expr::Prim(Prim::Aliphatic))
            }
            Some(b'*') => {
                self.i += 1;
                Ok(Expr::Prim(Prim::Any))
            }
            _ => self
                .element(true)
                .map(Expr::Prim)
                .ok_or_else(|| self.err("expected an atom")),
        }
    }

    fn bond(&mut self) -> BondExpr {
        let b = match self.peek() {
            Some(b'-') => BondExpr::Single,
            Some(b'=') => BondExpr::Double,
            Some(b'#') => BondExpr::Triple,
            Some(b':') => BondExpr::Aromatic,
            Some(b'~') => BondExpr::Any,
            _ => return BondExpr::SingleOrAromatic,
        };
        self.i += 1;
        b
    }
}

fn number_of(symbol: &str) -> Option<u8> {
    element::by_symbol(symbol).map(|e| e.number)
}

impl Pattern {
    /// Parses a pattern. The result is leaked to become `'static`: parsing is for code
    /// generation and tests, and compiled-in tables need no parsing at all.
    pub fn parse(smarts: &str) -> Result<Self, String> {
        let mut r = Reader {
            s: smarts.as_bytes(),
            i: 0,
        };
        let mut atoms = vec![r.atom()?];
        let mut parents = vec![(usize::MAX, BondExpr::Any)];
        let mut current = 0;
        let mut stack = Vec::new();
        while let Some(c) = r.peek() {
            match c {
                b'(' => {
                    r.i += 1;
                    stack.push(current);
                }
                b')' => {
                    r.i += 1;
                    current = stack.pop().ok_or_else(|| r.err("unmatched `)`"))?;
                }
                _ => {
                    let bond = r.bond();
                    atoms.push(r.atom()?);
                    parents.push((current, bond));
                    current = atoms.len() - 1;
                }
            }
        }
        if atoms.len() > MAX_PATTERN_ATOMS {
            return Err(format!("more than {MAX_PATTERN_ATOMS} atoms in `{smarts}`"));
        }
        Ok(Self {
            atoms: atoms.leak(),
            parents: parents.leak(),
        })
    }

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
