//! Rings drawn together: the ring systems of a molecule (rings that share atoms: fused,
//! spiro and bridged), each laid out in a frame of its own. The first ring is a regular
//! polygon; every next ring is the one sharing most atoms with those placed, its missing
//! atoms drawn on an arc between the placed ones (a regular polygon when the ring shares
//! one bond, the usual fused case), on whichever side crowds the placed atoms least.

use super::geometry::{Point, centroid};
use crate::molecule::Molecule;

/// Rings sharing atoms, with their atoms in cycle order.
#[derive(Debug, Clone)]
pub struct RingSystem {
    pub rings: Vec<Vec<usize>>,
    pub atoms: Vec<usize>,
}

/// The ring systems of `mol`, largest first.
pub fn ring_systems(mol: &Molecule) -> Vec<RingSystem> {
    let cycles: Vec<Vec<usize>> = mol
        .rings()
        .iter()
        .filter_map(|r| cycle_order(mol, &r.bonds))
        .collect();
    // Union-find over rings that share an atom.
    let mut parent: Vec<usize> = (0..cycles.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..cycles.len() {
        for j in i + 1..cycles.len() {
            if cycles[i].iter().any(|a| cycles[j].contains(a)) {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                parent[ri] = rj;
            }
        }
    }
    let mut systems: Vec<RingSystem> = Vec::new();
    let mut index_of_root = vec![usize::MAX; cycles.len()];
    for (i, cycle) in cycles.into_iter().enumerate() {
        let r = root(&mut parent, i);
        if index_of_root[r] == usize::MAX {
            index_of_root[r] = systems.len();
            systems.push(RingSystem {
                rings: Vec::new(),
                atoms: Vec::new(),
            });
        }
        let system = &mut systems[index_of_root[r]];
        for &a in &cycle {
            if !system.atoms.contains(&a) {
                system.atoms.push(a);
            }
        }
        system.rings.push(cycle);
    }
    systems.sort_by_key(|s| std::cmp::Reverse(s.atoms.len()));
    systems
}

/// The atoms of the ring made of `bonds`, in the order one meets them going round.
fn cycle_order(mol: &Molecule, bonds: &[usize]) -> Option<Vec<usize>> {
    let first = mol.bonds.get(*bonds.first()?)?;
    let mut order = vec![first.a, first.b];
    let mut used = vec![false; bonds.len()];
    used[0] = true;
    while order.len() < bonds.len() {
        let last = *order.last()?;
        let next = bonds.iter().enumerate().find_map(|(i, &b)| {
            let bond = &mol.bonds[b];
            (!used[i] && (bond.a == last || bond.b == last)).then_some((i, bond.other(last)))
        });
        let (i, atom) = next?;
        used[i] = true;
        order.push(atom);
    }
    Some(order)
}

/// The circumradius of a regular polygon of `n` unit sides.
fn polygon_radius(n: usize) -> f64 {
    0.5 / (std::f64::consts::PI / n as f64).sin()
}

/// How badly `new` points crowd `placed` ones: the sum of squared shortfalls below `reach`.
pub fn crowding(new: &[Point], placed: impl Iterator<Item = Point> + Clone, reach: f64) -> f64 {
    new.iter()
        .map(|p| {
            placed
                .clone()
                .map(|q| (reach - p.distance(q)).max(0.0).powi(2))
                .sum::<f64>()
        })
        .sum()
}

/// Coordinates for every atom of `system` (indexed by atom; others stay `None`), in a frame
/// of its own with the first ring centred on the origin.
pub fn layout(mol: &Molecule, system: &RingSystem, coords: &mut [Option<Point>]) {
    let Some(first) = first_ring(mol, system) else {
        return;
    };
    let ring = &system.rings[first];
    let radius = polygon_radius(ring.len());
    for (i, &a) in ring.iter().enumerate() {
        let angle =
            std::f64::consts::TAU * i as f64 / ring.len() as f64 - std::f64::consts::FRAC_PI_2;
        coords[a] = Some(Point::polar(angle) * radius);
    }
    let mut done = vec![false; system.rings.len()];
    done[first] = true;
    // Each round places the ring sharing most atoms with those placed.
    while let Some(next) = (0..system.rings.len())
        .filter(|&r| !done[r])
        .max_by_key(|&r| {
            let shared = system.rings[r]
                .iter()
                .filter(|&&a| coords[a].is_some())
                .count();
            (shared, std::cmp::Reverse(system.rings[r].len()))
        })
    {
        done[next] = true;
        place_ring(&system.rings[next], system, coords);
    }
}

/// The ring to start from: the one fused to most others (the middle of a fused row), then
/// the one with most substituents (the first ring is drawn as a polygon, later bridges may
/// have to cross it, and a substituent inside a ring cannot be drawn well), then the
/// largest.
fn first_ring(mol: &Molecule, system: &RingSystem) -> Option<usize> {
    (0..system.rings.len()).max_by_key(|&r| {
        let ring = &system.rings[r];
        let neighbours = (0..system.rings.len())
            .filter(|&o| o != r && system.rings[o].iter().any(|a| ring.contains(a)))
            .count();
        let substituted = ring
            .iter()
            .filter(|&&a| mol.neighbours(a).any(|n| !system.atoms.contains(&n)))
            .count();
        (neighbours, substituted, ring.len())
    })
}

/// Places the atoms of `ring` not placed yet: each run of them between placed atoms on an
/// arc, or the whole ring as a polygon around a single placed (spiro) atom. [`layout`]
/// only picks rings sharing at least one placed atom (a system's rings are connected).
fn place_ring(ring: &[usize], system: &RingSystem, coords: &mut [Option<Point>]) {
    let n = ring.len();
    let placed: Vec<usize> = (0..n).filter(|&i| coords[ring[i]].is_some()).collect();
    if placed.len() == n {
        return;
    }
    if placed.len() == 1 {
        place_spiro(ring, placed[0], system, coords);
        return;
    }
    // Runs of unplaced atoms: after each placed atom, the unplaced ones up to the next placed.
    for &start in &placed {
        let run: Vec<usize> = (1..n)
            .map(|k| (start + k) % n)
            .take_while(|&i| coords[ring[i]].is_none())
            .collect();
        if run.is_empty() {
            continue;
        }
        let end = (run.last().copied().unwrap_or(start) + 1) % n;
        let (u, v) = (ring[start], ring[end]);
        let atoms: Vec<usize> = run.iter().map(|&i| ring[i]).collect();
        place_arc(u, v, &atoms, system, coords);
    }
}

/// A ring sharing one atom with those placed: a regular polygon on the far side of it.
fn place_spiro(ring: &[usize], at: usize, system: &RingSystem, coords: &mut [Option<Point>]) {
    let n = ring.len();
    let p = coords[ring[at]].unwrap_or_default();
    let others = system
        .atoms
        .iter()
        .filter(|&&a| a != ring[at])
        .filter_map(|&a| coords[a]);
    let away = (p - centroid(others)).unit_or(Point::new(1.0, 0.0));
    let radius = polygon_radius(n);
    let centre = p + away * radius;
    let start = (p - centre).angle();
    for k in 1..n {
        let angle = start + std::f64::consts::TAU * k as f64 / n as f64;
        coords[ring[(at + k) % n]] = Some(centre + Point::polar(angle) * radius);
    }
}

/// Places `atoms` (in order) on an arc of bonds of length 1 from placed `u` to placed `v`,
/// bulging to the side where they crowd the placed atoms least.
fn place_arc(
    u: usize,
    v: usize,
    atoms: &[usize],
    system: &RingSystem,
    coords: &mut [Option<Point>],
) {
    let (pu, pv) = (coords[u].unwrap_or_default(), coords[v].unwrap_or_default());
    let segments = atoms.len() + 1;
    let placed: Vec<Point> = system.atoms.iter().filter_map(|&a| coords[a]).collect();
    // Arcs to either side, half as curved, and the straight line: a bridge across a ring
    // (quinuclidine's third) is best drawn straight through it.
    let straight = arc_points(pu, pv, segments, 0.0);
    let mut candidates = vec![straight.clone()];
    for side in [1.0, -1.0] {
        let arc = arc_points(pu, pv, segments, side);
        let half: Vec<Point> = arc
            .iter()
            .zip(&straight)
            .map(|(&a, &s)| (a + s) * 0.5)
            .collect();
        candidates.push(arc);
        candidates.push(half);
    }
    let best = candidates
        .iter()
        .min_by(|a, b| {
            crowding(a, placed.iter().copied(), 1.0).total_cmp(&crowding(
                b,
                placed.iter().copied(),
                1.0,
            ))
        })
        .cloned()
        .unwrap_or_default();
    for (&a, p) in atoms.iter().zip(best) {
        coords[a] = Some(p);
    }
}

/// The `segments - 1` inner points of an arc of `segments` equal chords of length 1 from
/// `a` to `b`, bulging to `side` (+1 or -1) of the line a-b; evenly along the line itself
/// for side 0, or when the chords cannot reach further apart.
pub fn arc_points(a: Point, b: Point, segments: usize, side: f64) -> Vec<Point> {
    let m = segments as f64;
    let d = a.distance(b);
    let chord = b - a;
    let bulge = chord.normal().unit_or(Point::new(0.0, 1.0)) * side;
    if d >= m - 1e-6 || d < 1e-9 || side == 0.0 {
        let step = chord.unit_or(Point::new(1.0, 0.0)) * (d.max(1.0) / m);
        let offset = if d < 1e-9 {
            bulge * 0.5
        } else {
            Point::default()
        };
        return (1..segments)
            .map(|k| a + step * k as f64 + offset)
            .collect();
    }
    // The angle the arc subtends: the chord of its ends, sin(t/2) / sin(t/2m), falls from m
    // (t -> 0, a straight line) to 0 (t = 2 pi); find t for the distance d by bisection.
    let span = |t: f64| (t / 2.0).sin() / (t / (2.0 * m)).sin();
    let (mut lo, mut hi) = (1e-9, std::f64::consts::TAU - 1e-9);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if span(mid) > d { lo = mid } else { hi = mid }
    }
    let t = (lo + hi) / 2.0;
    let radius = 0.5 / (t / (2.0 * m)).sin();
    let centre = (a + b) * 0.5 - bulge * (radius * (t / 2.0).cos());
    let start = (a - centre).angle();
    // Go round the way that passes the apex (centre + bulge * radius).
    let apex = centre + bulge * radius;
    let step = [t / m, -t / m]
        .into_iter()
        .min_by(|x, y| {
            let at = |s: f64| (centre + Point::polar(start + s * m / 2.0) * radius).distance(apex);
            at(*x).total_cmp(&at(*y))
        })
        .unwrap_or(t / m);
    (1..segments)
        .map(|k| centre + Point::polar(start + step * k as f64) * radius)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smiles::parse;

    fn laid_out(smiles: &str) -> (RingSystem, Vec<Option<Point>>) {
        let mol = parse(smiles).unwrap();
        let system = ring_systems(&mol).remove(0);
        let mut coords = vec![None; mol.atoms.len()];
        layout(&mol, &system, &mut coords);
        (system, coords)
    }

    #[test]
    fn fused_rings_are_regular_with_unit_bonds() {
        for smiles in ["c1ccc2ccccc2c1", "c1ccc2c(c1)ccc1ccccc12", "C1CCC2CCCC2C1"] {
            let mol = parse(smiles).unwrap();
            let (system, coords) = laid_out(smiles);
            assert_eq!(system.atoms.len(), mol.atoms.len(), "{smiles}");
            for bond in &mol.bonds {
                let d = coords[bond.a].unwrap().distance(coords[bond.b].unwrap());
                assert!((d - 1.0).abs() < 1e-6, "{smiles}: bond length {d}");
            }
            for i in 0..mol.atoms.len() {
                for j in i + 1..mol.atoms.len() {
                    let d = coords[i].unwrap().distance(coords[j].unwrap());
                    assert!(d > 0.9, "{smiles}: atoms {i} and {j} at {d}");
                }
            }
        }
    }

    #[test]
    fn an_arc_meets_both_ends_with_unit_chords() {
        let (a, b) = (Point::new(0.0, 0.0), Point::new(1.6, 0.0));
        let inner = arc_points(a, b, 3, 1.0);
        let mut all = vec![a];
        all.extend(inner);
        all.push(b);
        for w in all.windows(2) {
            assert!((w[0].distance(w[1]) - 1.0).abs() < 1e-6);
        }
    }
}
