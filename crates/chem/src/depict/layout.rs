//! 2D coordinates for a whole molecule. Ring systems are laid out on their own
//! ([`super::ring_systems`]) and placed as rigid pieces; everything else grows outwards from
//! the first piece, atom by atom: a chain continues in a zigzag (120 degrees), through a
//! triple bond or an allene in a straight line, and substituents share the widest free
//! angle around their atom. Disconnected parts (salts, mixtures) stand side by side.

use super::geometry::{Point, centroid};
use super::ring_systems::{self, RingSystem, crowding};
use crate::molecule::{BondOrder, Molecule};
use std::collections::VecDeque;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_3, FRAC_PI_6, PI, TAU};

/// Coordinates of every atom of `mol`, bonds about 1.0 long.
pub fn coordinates(mol: &Molecule) -> Vec<Point> {
    let systems = ring_systems::ring_systems(mol);
    let mut system_of = vec![None; mol.atoms.len()];
    for (i, s) in systems.iter().enumerate() {
        for &a in &s.atoms {
            system_of[a] = Some(i);
        }
    }
    let mut layout = Layout {
        mol,
        systems: &systems,
        system_of,
        coords: vec![None; mol.atoms.len()],
        turn: vec![1.0; mol.atoms.len()],
    };
    let mut parts: Vec<Vec<usize>> = Vec::new();
    for start in 0..mol.atoms.len() {
        if layout.coords[start].is_none() {
            let seed = layout.seed(start);
            parts.push(layout.grow(seed));
        }
    }
    let mut coords: Vec<Point> = layout
        .coords
        .iter()
        .map(|p| p.unwrap_or_default())
        .collect();
    arrange_side_by_side(&parts, &mut coords);
    coords
}

struct Layout<'m> {
    mol: &'m Molecule,
    systems: &'m [RingSystem],
    system_of: Vec<Option<usize>>,
    coords: Vec<Option<Point>>,
    /// Which way a chain atom's next bond turns (+1 or -1): the zigzag alternates.
    turn: Vec<f64>,
}

impl Layout<'_> {
    /// The atom to start the part holding `any` from: an atom of its largest ring system,
    /// else one end of its longest chain (so that chain draws as a level zigzag).
    fn seed(&self, any: usize) -> usize {
        let part = self.bfs_order(any);
        let in_ring = part
            .iter()
            .copied()
            .filter_map(|a| self.system_of[a].map(|s| (self.systems[s].atoms.len(), a)))
            .max();
        if let Some((_, atom)) = in_ring {
            return atom;
        }
        let far = |from: usize| *self.bfs_order(from).last().unwrap_or(&from);
        far(far(any))
    }

    /// The atoms connected to `from`, nearest first.
    fn bfs_order(&self, from: usize) -> Vec<usize> {
        let mut seen = vec![false; self.mol.atoms.len()];
        let mut order = vec![from];
        seen[from] = true;
        let mut i = 0;
        while i < order.len() {
            let a = order[i];
            i += 1;
            for n in self.mol.neighbours(a) {
                if !seen[n] {
                    seen[n] = true;
                    order.push(n);
                }
            }
        }
        order
    }

    /// Places the part holding `seed`; returns its atoms.
    fn grow(&mut self, seed: usize) -> Vec<usize> {
        let mut queue = VecDeque::new();
        match self.system_of[seed] {
            Some(s) => {
                let mut local = vec![None; self.mol.atoms.len()];
                ring_systems::layout(self.mol, &self.systems[s], &mut local);
                for &a in &self.systems[s].atoms {
                    self.coords[a] = local[a];
                    queue.push_back(a);
                }
            }
            None => {
                self.coords[seed] = Some(Point::default());
                queue.push_back(seed);
            }
        }
        let mut atoms = Vec::new();
        while let Some(a) = queue.pop_front() {
            atoms.push(a);
            for placed in self.place_substituents(a) {
                queue.push_back(placed);
            }
        }
        atoms
    }

    /// Places the unplaced neighbours of placed atom `a` (with the ring systems they belong
    /// to); returns every atom placed.
    fn place_substituents(&mut self, a: usize) -> Vec<usize> {
        let p = self.coords[a].unwrap_or_default();
        let mut todo: Vec<usize> = self
            .mol
            .neighbours(a)
            .filter(|&n| self.coords[n].is_none())
            .collect();
        if todo.is_empty() {
            return Vec::new();
        }
        // The larger branches take the middle directions, where there is most room.
        let sizes: Vec<usize> = todo.iter().map(|&n| self.branch_size(a, n)).collect();
        let mut order: Vec<usize> = (0..todo.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
        todo = order.iter().map(|&i| todo[i]).collect();
        let placed: Vec<Point> = self
            .mol
            .neighbours(a)
            .filter_map(|n| self.coords[n])
            .map(|q| q - p)
            .collect();
        let directions = self.directions(a, &placed, todo.len());
        let mut done = Vec::new();
        for (n, (dir, turn)) in todo.into_iter().zip(directions) {
            if self.coords[n].is_some() {
                continue; // placed meanwhile, with a ring system reached twice
            }
            match self.system_of[n] {
                Some(s) => done.extend(self.place_system(s, n, p, dir)),
                None => {
                    self.coords[n] = Some(p + dir);
                    self.turn[n] = turn;
                    done.push(n);
                }
            }
        }
        done
    }

    /// Atoms reached from `n` without passing `a` (capped: only the order matters).
    fn branch_size(&self, a: usize, n: usize) -> usize {
        let mut seen = vec![false; self.mol.atoms.len()];
        seen[a] = true;
        seen[n] = true;
        let mut stack = vec![n];
        let mut count = 0;
        while let Some(x) = stack.pop() {
            count += 1;
            if count > 64 {
                break;
            }
            for y in self.mol.neighbours(x) {
                if !seen[y] {
                    seen[y] = true;
                    stack.push(y);
                }
            }
        }
        count
    }

    /// Directions (unit vectors) for `count` new bonds at atom `a`, whose placed neighbours
    /// lie at `placed` (relative), each with the turn its next bond should take.
    fn directions(&self, a: usize, placed: &[Point], count: usize) -> Vec<(Point, f64)> {
        let turn = self.turn[a];
        if placed.len() == 1 && self.system_of[a].is_none() && count <= 3 {
            let incoming = (placed[0] * -1.0).unit_or(Point::new(1.0, 0.0));
            if count == 1 && self.is_linear(a) {
                return vec![(incoming, turn)];
            }
            // Rotations from the direction of travel; the first (the largest branch)
            // continues the zigzag.
            let rotations: &[f64] = match count {
                1 => &[FRAC_PI_3 * turn],
                2 => &[FRAC_PI_3 * turn, -FRAC_PI_3 * turn],
                _ => &[0.0, FRAC_PI_2, -FRAC_PI_2],
            };
            return rotations
                .iter()
                .map(|&t| {
                    let next = if t == 0.0 { -turn } else { -t.signum() };
                    (incoming.rotated(t), next)
                })
                .collect();
        }
        if placed.is_empty() {
            // A chain's first atom: its first bond at -30 degrees, the zigzag level.
            return (0..count)
                .map(|i| {
                    (
                        Point::polar(-FRAC_PI_6 + TAU * i as f64 / count as f64),
                        1.0,
                    )
                })
                .collect();
        }
        // The widest free angle between placed bonds, shared out evenly (one substituent
        // on a ring takes the bisector of its outside angle).
        let mut angles: Vec<f64> = placed.iter().map(|d| d.angle()).collect();
        angles.sort_by(f64::total_cmp);
        let (start, width) = (0..angles.len())
            .map(|i| {
                let next = angles.get(i + 1).copied().unwrap_or(angles[0] + TAU);
                (angles[i], next - angles[i])
            })
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .unwrap_or((0.0, TAU));
        let step = width / (count + 1) as f64;
        (0..count)
            .map(|i| {
                let angle = start + step * (i + 1) as f64;
                (Point::polar(angle), if i % 2 == 0 { turn } else { -turn })
            })
            .collect()
    }

    /// Whether `a` is sp: a triple bond, or two double bonds (an allene, a cumulene).
    fn is_linear(&self, a: usize) -> bool {
        let orders: Vec<BondOrder> = self.mol.adjacency[a]
            .iter()
            .map(|&b| self.mol.bonds[b].order)
            .collect();
        orders.contains(&BondOrder::Triple)
            || orders.iter().filter(|&&o| o == BondOrder::Double).count() >= 2
    }

    /// Places ring system `s` so that its atom `n` sits at `from + dir`, the system
    /// extending away from `from`; of it and its mirror image, the one that crowds the
    /// placed atoms least.
    fn place_system(&mut self, s: usize, n: usize, from: Point, dir: Point) -> Vec<usize> {
        let system = &self.systems[s];
        let mut local = vec![None; self.mol.atoms.len()];
        ring_systems::layout(self.mol, system, &mut local);
        let ln = local[n].unwrap_or_default();
        let ring_neighbours = self
            .mol
            .neighbours(n)
            .filter(|&m| self.system_of[m] == Some(s))
            .filter_map(|m| local[m]);
        let outward = (ln - centroid(ring_neighbours)).unit_or(Point::new(1.0, 0.0));
        let target = from + dir;
        let placed: Vec<Point> = self.coords.iter().flatten().copied().collect();
        let mut best: Option<(f64, Vec<(usize, Point)>)> = None;
        for mirror in [false, true] {
            let rotation = (dir.angle()) - outward.angle() + PI;
            let candidate: Vec<(usize, Point)> = system
                .atoms
                .iter()
                .map(|&a| {
                    let mut v = local[a].unwrap_or_default() - ln;
                    if mirror {
                        v = v.reflected(Point::default(), outward);
                    }
                    (a, target + v.rotated(rotation))
                })
                .collect();
            let points: Vec<Point> = candidate.iter().map(|&(_, p)| p).collect();
            let score = crowding(&points, placed.iter().copied(), 1.0);
            if best.as_ref().is_none_or(|(b, _)| score < *b - 1e-9) {
                best = Some((score, candidate));
            }
        }
        let (_, chosen) = best.unwrap_or_default();
        for &(a, p) in &chosen {
            self.coords[a] = Some(p);
        }
        chosen.into_iter().map(|(a, _)| a).collect()
    }
}

/// Moves each part (after the first) to the right of the previous one, centred vertically.
fn arrange_side_by_side(parts: &[Vec<usize>], coords: &mut [Point]) {
    let mut right = f64::NEG_INFINITY;
    for part in parts {
        let (min_x, max_x, min_y, max_y) = bounds(part.iter().map(|&a| coords[a]));
        let dx = if right.is_finite() {
            right + 1.5 - min_x
        } else {
            0.0
        };
        let dy = -(min_y + max_y) / 2.0;
        for &a in part {
            coords[a] = coords[a] + Point::new(dx, dy);
        }
        right = max_x + dx;
    }
}

/// (min x, max x, min y, max y) of `points` (zeros for none).
pub fn bounds(points: impl Iterator<Item = Point>) -> (f64, f64, f64, f64) {
    let mut b = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for p in points {
        b = (b.0.min(p.x), b.1.max(p.x), b.2.min(p.y), b.3.max(p.y));
    }
    if b.0.is_finite() {
        b
    } else {
        (0.0, 0.0, 0.0, 0.0)
    }
}
