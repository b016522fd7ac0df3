//! Reading MDL molfiles (the records of an SD file) into SMILES, so a library delivered as SDF
//! can go to the models, which read SMILES.
//!
//! Both connection-table versions are read: V2000 (fixed columns: atom symbol, charge code,
//! valence; bonds of order 1 to 3; `M  CHG`, `M  ISO` and `M  RAD` properties, which replace
//! the atom block's charges as the format says) and V3000 (`M  V30` atom and bond lines with
//! `CHG=`, `MASS=`, `RAD=`, `VAL=`). Hydrogens are those drawn as atoms plus the implicit ones
//! of the molfile convention: up to the atom's smallest default valence that fits (charged
//! atoms as their isoelectronic neutral: N+ as C, O- as F), or the valence field when given.
//! Aromatic bonds (type 4) and query atoms are refused with a message: they describe queries,
//! not structures. Coordinates and stereo are ignored.

use crate::Error;
use crate::element;
use crate::write::{self, Edge, Node};

mod v3000;

/// Atoms at most in one record (as [`crate::smiles::MAX_ATOMS`] for SMILES).
pub const MAX_ATOMS: usize = crate::smiles::MAX_ATOMS;

/// The SMILES string of the structure in `molfile` (the text up to and including `M  END`;
/// data items after it are ignored).
pub fn to_smiles(molfile: &str) -> Result<String, Error> {
    let table = read(molfile)?;
    table.into_smiles()
}

/// The title (first line) of a molfile, trimmed.
pub fn title(molfile: &str) -> &str {
    molfile.lines().next().unwrap_or("").trim()
}

/// The value of data item `<name>` in an SD record (`> <name>` then value lines up to a blank
/// line), joined with newlines; `None` when absent.
pub fn data_item(record: &str, name: &str) -> Option<String> {
    let mut lines = record.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix('>') else {
            continue;
        };
        let Some(start) = rest.find('<') else {
            continue;
        };
        let Some(len) = rest[start + 1..].find('>') else {
            continue;
        };
        if &rest[start + 1..start + 1 + len] != name {
            continue;
        }
        let value: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.trim().is_empty())
            .collect();
        return Some(value.join("\n"));
    }
    None
}

struct Atom {
    symbol: String,
    isotope: Option<u16>,
    charge: i8,
    radical: u8,
    /// Total valence from the valence field (V2000 `vvv`, V3000 `VAL=`), when given.
    valence: Option<u8>,
}

#[derive(Default)]
struct Table {
    atoms: Vec<Atom>,
    bonds: Vec<Edge>,
}

fn field(line: &str, from: usize, to: usize) -> &str {
    line.get(from..to.min(line.len())).unwrap_or("").trim()
}

fn number<T: std::str::FromStr + Default>(text: &str, what: &str, line: usize) -> Result<T, Error> {
    if text.is_empty() {
        return Ok(T::default());
    }
    text.parse().map_err(|_| {
        Error::new(format!(
            "molfile line {line}: {what} `{text}` is not a number"
        ))
    })
}

fn read(molfile: &str) -> Result<Table, Error> {
    let lines: Vec<&str> = molfile.lines().collect();
    let counts = lines
        .get(3)
        .ok_or_else(|| Error::new("molfile ends before its counts line (line 4)"))?;
    if counts.contains("V3000") {
        return v3000::read(&lines);
    }
    let atoms: usize = number(field(counts, 0, 3), "atom count", 4)?;
    let bonds: usize = number(field(counts, 3, 6), "bond count", 4)?;
    if atoms > MAX_ATOMS {
        return Err(Error::new(format!(
            "{atoms} atoms: at most {MAX_ATOMS} are accepted"
        )));
    }
    let need = 4 + atoms + bonds;
    if lines.len() < need {
        return Err(Error::new(format!(
            "molfile ends at line {} but its counts line announces {atoms} atoms and {bonds} bonds",
            lines.len()
        )));
    }
    let mut table = Table::default();
    for (k, line) in lines[4..4 + atoms].iter().enumerate() {
        let at = 5 + k;
        let symbol = field(line, 31, 34).to_owned();
        let charge = match number::<u8>(field(line, 36, 39), "charge code", at)? {
            0 => 0,
            c @ 1..=3 => 4 - c as i8,
            c @ 5..=7 => 4 - c as i8,
            4 => 0, // doublet radical code: handled below with M  RAD's meaning
            c => return Err(Error::new(format!("molfile line {at}: charge code {c}"))),
        };
        let radical = u8::from(field(line, 36, 39) == "4");
        let valence = match number::<u8>(field(line, 48, 51), "valence", at)? {
            0 => None,
            15 => Some(0),
            v => Some(v),
        };
        table.atoms.push(Atom {
            symbol,
            isotope: None,
            charge,
            radical,
            valence,
        });
    }
    for (k, line) in lines[4 + atoms..need].iter().enumerate() {
        let at = 5 + atoms + k;
        let a: usize = number(field(line, 0, 3), "atom number", at)?;
        let b: usize = number(field(line, 3, 6), "atom number", at)?;
        let order: u8 = number(field(line, 6, 9), "bond type", at)?;
        table.add_bond(a, b, order, at)?;
    }
    let mut reset = false;
    for (k, line) in lines[need..].iter().enumerate() {
        let at = need + k + 1;
        if line.starts_with("M  END") {
            break;
        }
        let kind = field(line, 3, 6);
        if !matches!(kind, "CHG" | "ISO" | "RAD") {
            continue;
        }
        // The first of these replaces every charge and radical of the atom block.
        if !reset && kind != "ISO" {
            reset = true;
            for atom in &mut table.atoms {
                atom.charge = 0;
                atom.radical = 0;
            }
        }
        let values: Vec<&str> = line.get(9..).unwrap_or("").split_whitespace().collect();
        for pair in values.chunks(2) {
            let [atom, value] = pair else {
                return Err(Error::new(format!(
                    "molfile line {at}: odd `M  {kind}` entry"
                )));
            };
            let atom = table.atom_index(number(atom, "atom number", at)?, at)?;
            let value: i32 = number(value, "value", at)?;
            let atom = &mut table.atoms[atom];
            match kind {
                "CHG" => atom.charge = value.clamp(-15, 15) as i8,
                "ISO" => atom.isotope = u16::try_from(value).ok().filter(|&v| v > 0),
                _ => atom.radical = if value == 2 { 1 } else { 2 },
            }
        }
    }
    Ok(table)
}

impl Table {
    fn atom_index(&self, number: usize, at: usize) -> Result<usize, Error> {
        if number == 0 || number > self.atoms.len() {
            return Err(Error::new(format!(
                "molfile line {at}: atom {number} does not exist ({} atoms)",
                self.atoms.len()
            )));
        }
        Ok(number - 1)
    }

    fn add_bond(&mut self, a: usize, b: usize, order: u8, at: usize) -> Result<(), Error> {
        let (a, b) = (self.atom_index(a, at)?, self.atom_index(b, at)?);
        if a == b {
            return Err(Error::new(format!(
                "molfile line {at}: a bond from atom {} to itself",
                a + 1
            )));
        }
        if !(1..=3).contains(&order) {
            return Err(Error::new(format!(
                "molfile line {at}: bond type {order} is a query or aromatic bond; \
                 write the structure in Kekulé form (bond types 1 to 3)"
            )));
        }
        if self
            .bonds
            .iter()
            .any(|e| (e.a, e.b) == (a, b) || (e.a, e.b) == (b, a))
        {
            return Err(Error::new(format!(
                "molfile line {at}: a second bond between atoms {} and {}",
                a + 1,
                b + 1
            )));
        }
        self.bonds.push(Edge { a, b, order });
        Ok(())
    }

    /// Nitro groups and N-oxides drawn with a pentavalent nitrogen (`N(=O)=O`) in the
    /// charge-separated form (`[N+](=O)[O-]`), as RDKit's sanitization does on reading a
    /// molfile: models trained on RDKit's molecules saw that form.
    fn separate_charges(&mut self) {
        for n in 0..self.atoms.len() {
            let atom = &self.atoms[n];
            if atom.symbol != "N" || atom.charge != 0 || atom.radical != 0 {
                continue;
            }
            let bonds: Vec<usize> = (0..self.bonds.len())
                .filter(|&b| self.bonds[b].a == n || self.bonds[b].b == n)
                .collect();
            let valence: u32 = bonds.iter().map(|&b| u32::from(self.bonds[b].order)).sum();
            if valence != 5 {
                continue;
            }
            let terminal_oxygen = bonds.iter().copied().find(|&b| {
                let e = self.bonds[b];
                let o = if e.a == n { e.b } else { e.a };
                let degree = self.bonds.iter().filter(|x| x.a == o || x.b == o).count();
                e.order == 2
                    && self.atoms[o].symbol == "O"
                    && self.atoms[o].charge == 0
                    && degree == 1
            });
            if let Some(b) = terminal_oxygen {
                let e = &mut self.bonds[b];
                e.order = 1;
                let o = if e.a == n { e.b } else { e.a };
                self.atoms[n].charge = 1;
                self.atoms[o].charge = -1;
            }
        }
    }

    fn into_smiles(mut self) -> Result<String, Error> {
        self.separate_charges();
        let n = self.atoms.len();
        if n == 0 {
            return Err(Error::new("the molfile has no atoms"));
        }
        for atom in &self.atoms {
            if element::by_symbol(&atom.symbol).is_none()
                && !element::is_element_symbol(&atom.symbol)
                && !matches!(atom.symbol.as_str(), "D" | "T")
            {
                return Err(Error::new(format!(
                    "atom `{}` is a query or pseudo-atom, not an element",
                    atom.symbol
                )));
            }
        }
        // Plain hydrogens drawn as atoms become counts on their neighbour.
        let folded: Vec<bool> = (0..n).map(|i| self.is_plain_hydrogen(i)).collect();
        let mut drawn_h = vec![0u8; n];
        let mut orders = vec![0u32; n];
        for e in &self.bonds {
            orders[e.a] += u32::from(e.order);
            orders[e.b] += u32::from(e.order);
            if folded[e.a] {
                drawn_h[e.b] += 1;
            }
            if folded[e.b] {
                drawn_h[e.a] += 1;
            }
        }
        let mut index = vec![usize::MAX; n];
        let mut nodes = Vec::with_capacity(n);
        for (i, atom) in self.atoms.iter().enumerate().filter(|(i, _)| !folded[*i]) {
            index[i] = nodes.len();
            let (symbol, isotope) = match atom.symbol.as_str() {
                "D" => ("H".to_owned(), Some(2)),
                "T" => ("H".to_owned(), Some(3)),
                s => (s.to_owned(), atom.isotope),
            };
            let implicit = implicit_hydrogens(atom, orders[i]);
            nodes.push(Node {
                symbol,
                isotope,
                charge: atom.charge,
                hydrogens: drawn_h[i].saturating_add(implicit),
            });
        }
        let edges: Vec<Edge> = self
            .bonds
            .iter()
            .filter(|e| !folded[e.a] && !folded[e.b])
            .map(|e| Edge {
                a: index[e.a],
                b: index[e.b],
                order: e.order,
            })
            .collect();
        Ok(write::smiles(&nodes, &edges))
    }

    /// A hydrogen atom with one single bond to a heavier atom, no charge, isotope or radical.
    fn is_plain_hydrogen(&self, i: usize) -> bool {
        let atom = &self.atoms[i];
        if atom.symbol != "H" || atom.charge != 0 || atom.isotope.is_some() || atom.radical != 0 {
            return false;
        }
        let mut bonds = self.bonds.iter().filter(|e| e.a == i || e.b == i);
        match (bonds.next(), bonds.next()) {
            (Some(e), None) => {
                let other = if e.a == i { e.b } else { e.a };
                e.order == 1 && self.atoms[other].symbol != "H"
            }
            _ => false,
        }
    }
}

/// Hydrogens the molfile convention implies on `atom` with bond orders `orders` (drawn
/// hydrogens included).
fn implicit_hydrogens(atom: &Atom, orders: u32) -> u8 {
    if let Some(valence) = atom.valence {
        return u32::from(valence).saturating_sub(orders) as u8;
    }
    let Some(own) = element::by_symbol(&atom.symbol) else {
        return 0;
    };
    // Only the elements SMILES writes bare get hydrogens by default (as RDKit does for metals,
    // which keep none).
    if !matches!(
        own.symbol,
        "B" | "C" | "N" | "O" | "P" | "S" | "F" | "Cl" | "Br" | "I" | "Se" | "As" | "Si"
    ) {
        return 0;
    }
    let valences = element::valences_with_charge(own, atom.charge);
    let used = orders + u32::from(atom.radical);
    valences
        .iter()
        .map(|&v| u32::from(v))
        .find(|&v| v >= used)
        .map_or(0, |v| (v - used) as u8)
}

#[cfg(test)]
mod tests;
