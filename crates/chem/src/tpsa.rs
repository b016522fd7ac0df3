//! Topological polar surface area over nitrogen and oxygen (RDKit `CalcTPSA` default):
//! the sum of per-atom contributions from Ertl, Rohde & Selzer, J. Med. Chem. 43, 3714-3717
//! (2000), Table 1, chosen by the atom's environment as RDKit does.
//!
//! The environment of an N or O is: heavy neighbours, hydrogens, formal charge, counts of
//! single, double, triple and aromatic bonds to heavy atoms, and membership in a 3-ring.
//! The first matching row of the table gives the contribution; an environment the table does
//! not list falls back to Ertl's estimate (N: 30.5 − 8.2·neighbours + 1.5·H; O: 28.5 −
//! 8.6·neighbours + 1.5·H; never below 0).

use crate::molecule::{BondOrder, Molecule};

/// One row: a condition on the environment (`None` = any value) and its contribution in Å².
struct Row {
    nbrs: u32,
    h: u32,
    charge: i8,
    single: Option<u32>,
    double: Option<u32>,
    triple: Option<u32>,
    aromatic: Option<u32>,
    in_3_ring: Option<bool>,
    area: f64,
}

const fn row(
    nbrs: u32,
    h: u32,
    charge: i8,
    bonds: [Option<u32>; 4],
    in_3_ring: Option<bool>,
    area: f64,
) -> Row {
    let [single, double, triple, aromatic] = bonds;
    Row {
        nbrs,
        h,
        charge,
        single,
        double,
        triple,
        aromatic,
        in_3_ring,
        area,
    }
}

const N: Option<u32> = None;
const fn n(x: u32) -> Option<u32> {
    Some(x)
}

/// Nitrogen rows: [single, double, triple, aromatic].
const NITROGEN: &[Row] = &[
    row(1, 0, 0, [N, N, n(1), N], None, 23.79),
    row(1, 1, 0, [N, n(1), N, N], None, 23.85),
    row(1, 2, 0, [n(1), N, N, N], None, 26.02),
    row(1, 2, 1, [N, n(1), N, N], None, 25.59),
    row(1, 3, 1, [n(1), N, N, N], None, 27.64),
    row(2, 0, 0, [n(1), n(1), N, N], None, 12.36),
    row(2, 0, 0, [N, n(1), n(1), N], None, 13.60),
    row(2, 1, 0, [n(2), N, N, N], Some(true), 21.94),
    row(2, 1, 0, [n(2), N, N, N], Some(false), 12.03),
    row(2, 0, 1, [n(1), N, n(1), N], None, 4.36),
    row(2, 1, 1, [n(1), n(1), N, N], None, 13.97),
    row(2, 2, 1, [n(2), N, N, N], None, 16.61),
    row(2, 0, 0, [N, N, N, n(2)], None, 12.89),
    row(2, 1, 0, [N, N, N, n(2)], None, 15.79),
    row(2, 1, 1, [N, N, N, n(2)], None, 14.14),
    row(3, 0, 0, [n(3), N, N, N], Some(true), 3.01),
    row(3, 0, 0, [n(3), N, N, N], Some(false), 3.24),
    row(3, 0, 0, [n(1), n(2), N, N], None, 11.68),
    row(3, 0, 1, [n(2), n(1), N, N], None, 3.01),
    row(3, 1, 1, [n(3), N, N, N], None, 4.44),
    row(3, 0, 0, [N, N, N, n(3)], None, 4.41),
    row(3, 0, 0, [n(1), N, N, n(2)], None, 4.93),
    row(3, 0, 0, [N, n(1), N, n(2)], None, 8.39),
    row(3, 0, 1, [N, N, N, n(3)], None, 4.10),
    row(3, 0, 1, [n(1), N, N, n(2)], None, 3.88),
    row(4, 0, 1, [n(4), N, N, N], None, 0.0),
];

const OXYGEN: &[Row] = &[
    row(1, 0, 0, [N, n(1), N, N], None, 17.07),
    row(1, 1, 0, [n(1), N, N, N], None, 20.23),
    row(1, 0, -1, [n(1), N, N, N], None, 23.06),
    row(2, 0, 0, [n(2), N, N, N], Some(true), 12.53),
    row(2, 0, 0, [n(2), N, N, N], Some(false), 9.23),
    row(2, 0, 0, [N, N, N, n(2)], None, 13.14),
];

struct Env {
    nbrs: u32,
    h: u32,
    charge: i8,
    bonds: [u32; 4],
    in_3_ring: bool,
}

impl Row {
    fn matches(&self, e: &Env) -> bool {
        let counts = [self.single, self.double, self.triple, self.aromatic];
        self.nbrs == e.nbrs
            && self.h == e.h
            && self.charge == e.charge
            && counts
                .iter()
                .zip(e.bonds)
                .all(|(want, have)| want.is_none_or(|w| w == have))
            && self.in_3_ring.is_none_or(|r| r == e.in_3_ring)
    }
}

pub fn tpsa(mol: &Molecule) -> f64 {
    let mut in_3_ring = vec![false; mol.atoms.len()];
    for ring in mol.rings().iter().filter(|r| r.atoms.len() == 3) {
        for &a in &ring.atoms {
            in_3_ring[a] = true;
        }
    }
    let mut total = 0.0;
    for (i, atom) in mol.atoms.iter().enumerate() {
        let (table, base, per_nbr) = match atom.element.number {
            7 => (NITROGEN, 30.5, 8.2),
            8 => (OXYGEN, 28.5, 8.6),
            _ => continue,
        };
        let mut bonds = [0u32; 4];
        let mut nbrs = 0;
        for &b in &mol.adjacency[i] {
            let bond = &mol.bonds[b];
            if mol.atoms[bond.other(i)].element.number == 1 {
                continue;
            }
            nbrs += 1;
            let slot = match bond.order {
                BondOrder::Single => 0,
                BondOrder::Double => 1,
                BondOrder::Triple => 2,
                BondOrder::Aromatic => 3,
                BondOrder::Quadruple => continue,
            };
            bonds[slot] += 1;
        }
        let env = Env {
            nbrs,
            h: mol.total_hydrogens(i),
            charge: atom.charge,
            bonds,
            in_3_ring: in_3_ring[i],
        };
        total += match table.iter().find(|r| r.matches(&env)) {
            Some(r) => r.area,
            None => (base - per_nbr * f64::from(env.nbrs) + 1.5 * f64::from(env.h)).max(0.0),
        };
    }
    total
}

#[cfg(test)]
mod tests {
    use crate::smiles::parse;

    fn t(s: &str) -> f64 {
        super::tpsa(&parse(s).unwrap())
    }

    #[test]
    fn known_values() {
        assert!(
            (t("CC(=O)Oc1ccccc1C(=O)O") - 63.60).abs() < 0.005,
            "aspirin {}",
            t("CC(=O)Oc1ccccc1C(=O)O")
        );
        assert!(
            (t("Cn1cnc2c1c(=O)n(C)c(=O)n2C") - 61.82).abs() < 0.005,
            "caffeine"
        );
        assert!((t("c1ccccc1") - 0.0).abs() < 1e-9);
        assert!((t("C1CO1") - 12.53).abs() < 1e-9, "epoxide O in a 3-ring");
    }
}
