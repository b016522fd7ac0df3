//! Ring perception: the smallest set of smallest rings (SSSR), found as shortest cycles
//! through each ring bond and kept when independent of the smaller ones already chosen (GF(2)
//! elimination); and its symmetrized form, which RDKit's ring counts use: for a cage such as
//! quinuclidine (bicyclo[2.2.2]octane) the SSSR holds two of three equivalent 6-rings, and
//! the symmetrized set adds the third.

use crate::molecule::Molecule;
pub use crate::molecule::Ring;

/// Rings: bonds − atoms + connected parts.
pub fn ring_count(mol: &Molecule) -> usize {
    let (_, parts) = components(mol, |_| true);
    (mol.bonds.len() + parts).saturating_sub(mol.atoms.len())
}

/// The connected parts of the molecule joined by the bonds `keep` accepts: each atom's part
/// (numbered from 0 in atom order), and how many parts there are.
fn components(mol: &Molecule, keep: impl Fn(usize) -> bool) -> (Vec<usize>, usize) {
    let mut part = vec![usize::MAX; mol.atoms.len()];
    let mut count = 0;
    let mut stack = Vec::new();
    for start in 0..mol.atoms.len() {
        if part[start] != usize::MAX {
            continue;
        }
        part[start] = count;
        stack.push(start);
        while let Some(a) = stack.pop() {
            for &b in &mol.adjacency[a] {
                let n = mol.bonds[b].other(a);
                if keep(b) && part[n] == usize::MAX {
                    part[n] = count;
                    stack.push(n);
                }
            }
        }
        count += 1;
    }
    (part, count)
}

impl Molecule {
    /// The symmetrized SSSR ([`symmetrized_sssr`]), computed once.
    pub fn rings(&self) -> &[Ring] {
        self.rings.get_or_init(|| symmetrized_sssr(self))
    }
}

/// Most shortest paths collected per bond; cages have a handful, and the cap bounds the work.
const MAX_PATHS_PER_BOND: usize = 32;

/// Which bonds lie on a ring: those that are not bridges (a bridge's removal disconnects
/// its atoms), found in one depth-first pass (Tarjan's low-link). Only ring bonds can close a
/// cycle, so only they are searched for shortest paths: for an acyclic bond that search
/// would walk the whole molecule to find nothing, and most bonds of a drug-like molecule are
/// acyclic.
fn ring_bonds(mol: &Molecule) -> Vec<bool> {
    let n = mol.atoms.len();
    let mut on_ring = vec![true; mol.bonds.len()];
    let mut order = vec![usize::MAX; n]; // discovery order, MAX = not yet visited
    let mut low = vec![0; n];
    let mut visited = 0;
    // (atom, the bond it was reached by, next adjacency index to look at)
    let mut stack: Vec<(usize, usize, usize)> = Vec::new();
    for root in 0..n {
        if order[root] != usize::MAX {
            continue;
        }
        order[root] = visited;
        low[root] = visited;
        visited += 1;
        stack.push((root, usize::MAX, 0));
        while let Some(&mut (atom, via, ref mut next)) = stack.last_mut() {
            if let Some(&b) = mol.adjacency[atom].get(*next) {
                *next += 1;
                if b == via {
                    continue;
                }
                let to = mol.bonds[b].other(atom);
                if order[to] == usize::MAX {
                    order[to] = visited;
                    low[to] = visited;
                    visited += 1;
                    stack.push((to, b, 0));
                } else {
                    low[atom] = low[atom].min(order[to]);
                }
                continue;
            }
            stack.pop();
            if let Some(&(parent, _, _)) = stack.last() {
                low[parent] = low[parent].min(low[atom]);
                if low[atom] > order[parent] {
                    on_ring[via] = false;
                }
            }
        }
    }
    on_ring
}

/// The ring systems (atoms joined by ring bonds) that are one ring alone, as many bonds as
/// atoms: for each ring bond, `Some(system)` when its system is such a ring, and for each
/// system its ring bonds in index order. That ring is the only cycle through each of its
/// bonds, so it needs no search: most rings of drug-like molecules are alone in their
/// system (benzene, piperidine), while fused and spiro systems still get the search.
fn lone_rings(mol: &Molecule, on_ring: &[bool]) -> (Vec<Option<usize>>, Vec<Vec<usize>>) {
    let (system_of_atom, systems) = components(mol, |b| on_ring[b]);
    let mut atoms_in = vec![0; systems];
    system_of_atom.iter().for_each(|&s| atoms_in[s] += 1);
    let mut bonds_in: Vec<Vec<usize>> = vec![Vec::new(); systems];
    for (i, bond) in mol.bonds.iter().enumerate() {
        if on_ring[i] {
            bonds_in[system_of_atom[bond.a]].push(i);
        }
    }
    let system_of_bond = mol
        .bonds
        .iter()
        .enumerate()
        .map(|(i, bond)| {
            let system = system_of_atom[bond.a];
            (on_ring[i] && bonds_in[system].len() == atoms_in[system]).then_some(system)
        })
        .collect();
    (system_of_bond, bonds_in)
}

/// The search for shortest cycles through each ring bond of one molecule, and its scratch
/// space. It walks only ring bonds (every bond of a cycle is one), through an adjacency list
/// of those alone, and allocates nothing per bond or per path: profiled, allocating and
/// growing a vector for every path and every step of one, and stepping over substituents,
/// were most of ring perception's time, natively and in WebAssembly.
struct Search {
    /// Each atom's ring bonds, in the molecule's adjacency order, as (neighbour, bond):
    /// those of atom `a` are `ring_neighbours[starts[a]..starts[a + 1]]`.
    starts: Vec<usize>,
    ring_neighbours: Vec<(usize, usize)>,
    /// Distance from the search's start; `usize::MAX` where not reached.
    dist: Vec<usize>,
    /// The breadth-first queue: every atom reached, in order (so also what to reset).
    reached: Vec<usize>,
    /// The path being walked back, as bonds.
    path: Vec<usize>,
    /// A cycle found, as its bonds in index order.
    cycle: Vec<usize>,
}

impl Search {
    fn new(mol: &Molecule, on_ring: &[bool]) -> Self {
        let mut starts = Vec::with_capacity(mol.atoms.len() + 1);
        let mut ring_neighbours = Vec::new();
        for (a, bonds) in mol.adjacency.iter().enumerate() {
            starts.push(ring_neighbours.len());
            ring_neighbours.extend(
                bonds
                    .iter()
                    .filter(|&&b| on_ring[b])
                    .map(|&b| (mol.bonds[b].other(a), b)),
            );
        }
        starts.push(ring_neighbours.len());
        Self {
            starts,
            ring_neighbours,
            dist: vec![usize::MAX; mol.atoms.len()],
            reached: Vec::with_capacity(mol.atoms.len()),
            path: Vec::new(),
            cycle: Vec::new(),
        }
    }

    /// Calls `found` with every shortest cycle through ring bond `skip` (from `from` to
    /// `to`, its atoms), as its bonds in index order, up to [`MAX_PATHS_PER_BOND`] of them:
    /// the shortest paths of ring bonds between its atoms not using it, closed by it.
    fn shortest_cycles(
        &mut self,
        from: usize,
        to: usize,
        skip: usize,
        found: &mut dyn FnMut(&[usize]),
    ) {
        for &a in &self.reached {
            self.dist[a] = usize::MAX;
        }
        self.reached.clear();
        self.dist[from] = 0;
        self.reached.push(from);
        let mut next = 0;
        while let Some(&a) = self.reached.get(next) {
            next += 1;
            if a == to {
                break;
            }
            for i in self.starts[a]..self.starts[a + 1] {
                let (n, b) = self.ring_neighbours[i];
                if b != skip && self.dist[n] == usize::MAX {
                    self.dist[n] = self.dist[a] + 1;
                    self.reached.push(n);
                }
            }
        }
        if self.dist[to] == usize::MAX {
            return;
        }
        self.path.clear();
        let mut left = MAX_PATHS_PER_BOND;
        self.walk_back(to, from, skip, &mut left, found);
    }

    /// Walks back from `atom` to `from`, always to a neighbour one step closer, calling
    /// `found` at each arrival. The steps are taken last neighbour first: the order the
    /// cycles are found in decides which of equally small ones the SSSR keeps.
    fn walk_back(
        &mut self,
        atom: usize,
        from: usize,
        skip: usize,
        left: &mut usize,
        found: &mut dyn FnMut(&[usize]),
    ) {
        if atom == from {
            self.cycle.clear();
            self.cycle.extend_from_slice(&self.path);
            self.cycle.push(skip);
            self.cycle.sort_unstable();
            found(&self.cycle);
            *left -= 1;
            return;
        }
        for i in (self.starts[atom]..self.starts[atom + 1]).rev() {
            let (n, b) = self.ring_neighbours[i];
            if b == skip || self.dist[n] == usize::MAX || self.dist[n] + 1 != self.dist[atom] {
                continue;
            }
            self.path.push(b);
            self.walk_back(n, from, skip, left, found);
            self.path.pop();
            if *left == 0 {
                return;
            }
        }
    }
}

/// The SSSR plus every shortest cycle left out of it that is no larger than the SSSR rings
/// it shares a bond with (RDKit's symmetrized SSSR).
pub fn symmetrized_sssr(mol: &Molecule) -> Vec<Ring> {
    let (mut rings, left_out) = sssr_with_candidates(mol);
    let chosen = rings.len();
    for cand in left_out {
        let bound = rings[..chosen]
            .iter()
            .filter(|r| r.bonds.iter().any(|b| cand.contains(b)))
            .map(|r| r.bonds.len())
            .max();
        if bound.is_some_and(|max| cand.len() <= max) {
            rings.push(ring_from_bonds(mol, cand));
        }
    }
    rings
}

fn ring_from_bonds(mol: &Molecule, bonds: Vec<usize>) -> Ring {
    let mut atoms: Vec<usize> = bonds
        .iter()
        .flat_map(|&b| [mol.bonds[b].a, mol.bonds[b].b])
        .collect();
    atoms.sort_unstable();
    atoms.dedup();
    Ring { bonds, atoms }
}

/// The smallest set of smallest rings.
pub fn sssr(mol: &Molecule) -> Vec<Ring> {
    sssr_with_candidates(mol).0
}

/// The SSSR, and the shortest cycles that were not chosen for it.
fn sssr_with_candidates(mol: &Molecule) -> (Vec<Ring>, Vec<Vec<usize>>) {
    let wanted = ring_count(mol);
    if wanted == 0 {
        return (Vec::new(), Vec::new());
    }
    let words = mol.bonds.len().div_ceil(64);
    let mut candidates: Vec<Vec<usize>> = Vec::new();
    let on_ring = ring_bonds(mol);
    // Made at the first ring bond that needs it: most molecules' rings are all alone.
    let mut search: Option<Search> = None;
    let (lone_system, mut system_bonds) = lone_rings(mol, &on_ring);
    for (i, bond) in mol.bonds.iter().enumerate() {
        if !on_ring[i] {
            continue;
        }
        // What the search would find, in the same order: the ring, at its first bond (a
        // ring has bonds, so an emptied list means it was taken).
        if let Some(system) = lone_system[i] {
            let ring = std::mem::take(&mut system_bonds[system]);
            if !ring.is_empty() {
                candidates.push(ring);
            }
            continue;
        }
        let search = search.get_or_insert_with(|| Search::new(mol, &on_ring));
        search.shortest_cycles(bond.a, bond.b, i, &mut |cycle| {
            if !candidates.iter().any(|c| c == cycle) {
                candidates.push(cycle.to_vec());
            }
        });
    }
    candidates.sort_by_key(Vec::len);
    let mut basis: Vec<Vec<u64>> = Vec::new();
    let mut rings = Vec::new();
    let mut left_out = Vec::new();
    for cand in candidates {
        if rings.len() == wanted {
            left_out.push(cand);
            continue;
        }
        let mut reduced = vec![0u64; words];
        for &b in &cand {
            reduced[b / 64] |= 1 << (b % 64);
        }
        for row in &basis {
            let pivot = leading_bit(row);
            if reduced[pivot / 64] >> (pivot % 64) & 1 == 1 {
                reduced.iter_mut().zip(row).for_each(|(x, y)| *x ^= y);
            }
        }
        if reduced.iter().all(|w| *w == 0) {
            left_out.push(cand);
            continue;
        }
        basis.push(reduced);
        basis.sort_by_key(|r| std::cmp::Reverse(leading_bit(r)));
        rings.push(ring_from_bonds(mol, cand));
    }
    (rings, left_out)
}

fn leading_bit(v: &[u64]) -> usize {
    for (i, w) in v.iter().enumerate().rev() {
        if *w != 0 {
            return i * 64 + 63 - w.leading_zeros() as usize;
        }
    }
    0
}

#[cfg(test)]
mod tests;
