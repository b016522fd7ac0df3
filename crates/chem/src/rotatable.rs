//! Rotatable bonds as RDKit counts them by default (`CalcNumRotatableBonds`, "strict"
//! definition, Lipinski.cpp): a single or aromatic bond outside rings whose two atoms
//!
//! - are in no triple bond and have more than one explicit neighbour;
//! - are not the centre of a CF3, CCl3, CBr3 or C(CH3)3 group;
//!
//! and at least one of which is also not part of an amide-like link: an aliphatic carbon
//! with three neighbours, double-bonded to aliphatic N, O or S and singly bonded outside a
//! ring to N, O or S (S with more than one neighbour); the N, O or S on the other side of
//! such a link; or the same pair where the double bond goes to a cationic nitrogen. The
//! conditions are RDKit's SMARTS pattern, evaluated on the graph directly.

use crate::molecule::{BondOrder, Molecule};

struct Ctx<'a> {
    mol: &'a Molecule,
    in_ring: Vec<bool>,
}

impl Ctx<'_> {
    fn z(&self, a: usize) -> u8 {
        self.mol.atoms[a].element.number
    }
    fn aliphatic(&self, a: usize, z: u8) -> bool {
        self.z(a) == z && !self.mol.atoms[a].aromatic
    }
    fn degree(&self, a: usize) -> usize {
        self.mol.adjacency[a].len()
    }
    /// (neighbour, bond) pairs.
    fn links(&self, a: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.mol.adjacency[a]
            .iter()
            .map(move |&b| (self.mol.bonds[b].other(a), b))
    }
    fn order(&self, b: usize) -> BondOrder {
        self.mol.bonds[b].order
    }
    fn single_chain(&self, b: usize) -> bool {
        self.order(b) == BondOrder::Single && !self.in_ring[b]
    }

    /// `!$(*#*) & !D1 & !CX3 (X = F, Cl, Br) & !C(CH3)3`.
    fn common(&self, a: usize) -> bool {
        if self
            .links(a)
            .any(|(_, b)| self.order(b) == BondOrder::Triple)
            || self.degree(a) == 1
        {
            return false;
        }
        if self.aliphatic(a, 6) {
            for halogen in [9, 17, 35] {
                if self
                    .links(a)
                    .filter(|&(n, _)| self.aliphatic(n, halogen))
                    .count()
                    >= 3
                {
                    return false;
                }
            }
            let methyls = self
                .links(a)
                .filter(|&(n, _)| self.aliphatic(n, 6) && self.mol.total_hydrogens(n) == 3)
                .count();
            if methyls >= 3 {
                return false;
            }
        }
        true
    }

    /// `[CD3]` double-bonded to something `target` accepts.
    fn cd3_double_to(&self, c: usize, target: impl Fn(usize) -> bool) -> bool {
        self.aliphatic(c, 6)
            && self.degree(c) == 3
            && self
                .links(c)
                .any(|(n, b)| self.order(b) == BondOrder::Double && target(n))
    }

    fn n_o_s_acceptor(&self, n: usize) -> bool {
        // [N,O,S]: aliphatic N, O or S.
        !self.mol.atoms[n].aromatic && matches!(self.z(n), 7 | 8 | 16)
    }

    fn n_plus(&self, n: usize) -> bool {
        self.aliphatic(n, 7) && self.mol.atoms[n].charge == 1
    }

    /// `[#7,O,S!D1]`: any N, aliphatic O, aliphatic S with more than one neighbour.
    fn hetero_link(&self, n: usize) -> bool {
        self.z(n) == 7 || self.aliphatic(n, 8) || (self.aliphatic(n, 16) && self.degree(n) != 1)
    }

    /// The amide-like exclusions of the first atom of RDKit's pattern.
    fn amide_like(&self, a: usize) -> bool {
        let as_carbon = |double_ok: &dyn Fn(usize) -> bool, partner_ok: &dyn Fn(usize) -> bool| {
            self.cd3_double_to(a, double_ok)
                && self
                    .links(a)
                    .any(|(n, b)| self.single_chain(b) && partner_ok(n))
        };
        let as_hetero = |partner_ok: &dyn Fn(usize) -> bool, double_ok: &dyn Fn(usize) -> bool| {
            partner_ok(a)
                && self
                    .links(a)
                    .any(|(c, b)| self.single_chain(b) && self.cd3_double_to(c, double_ok))
        };
        let n_d_not1 = |n: usize| self.z(n) == 7 && self.degree(n) != 1;
        as_carbon(&|n| self.n_o_s_acceptor(n), &|n| self.hetero_link(n))
            || as_hetero(&|n| self.hetero_link(n), &|n| self.n_o_s_acceptor(n))
            || as_carbon(&|n| self.n_plus(n), &n_d_not1)
            || as_hetero(&n_d_not1, &|n| self.n_plus(n))
    }
}

pub fn count(mol: &Molecule) -> usize {
    let mut in_ring = vec![false; mol.bonds.len()];
    for ring in mol.rings() {
        for &b in &ring.bonds {
            in_ring[b] = true;
        }
    }
    let ctx = Ctx { mol, in_ring };
    (0..mol.bonds.len())
        .filter(|&b| {
            let bond = &mol.bonds[b];
            matches!(bond.order, BondOrder::Single | BondOrder::Aromatic)
                && !ctx.in_ring[b]
                && ctx.common(bond.a)
                && ctx.common(bond.b)
                && (!ctx.amide_like(bond.a) || !ctx.amide_like(bond.b))
        })
        .count()
}

#[cfg(test)]
mod tests {
    use crate::smiles::parse;

    fn rb(s: &str) -> usize {
        super::count(&parse(s).unwrap())
    }

    #[test]
    fn classic_cases() {
        assert_eq!(rb("CCCC"), 1);
        assert_eq!(rb("CC(=O)NC"), 0, "amide C-N is not rotatable");
        assert_eq!(
            rb("CC(=O)OCC"),
            1,
            "ester: C(=O)-O excluded, CH3 ends never count"
        );
        assert_eq!(rb("c1ccccc1-c1ccccc1"), 1);
        assert_eq!(rb("CC(C)(C)C"), 0);
        assert_eq!(rb("FC(F)(F)c1ccccc1"), 0);
        assert_eq!(rb("CC#CC"), 0);
        assert_eq!(rb("CC(=O)Oc1ccccc1C(=O)O"), 2, "aspirin");
    }
}
