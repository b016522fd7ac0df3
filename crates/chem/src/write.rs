//! Writing a SMILES string for a molecular graph given in Kekulé form with explicit hydrogen
//! counts, as a molfile describes one ([`crate::molfile`]).
//!
//! The string is valid and faithful (same atoms, charges, isotopes, hydrogens and bonds), not
//! canonical: atoms appear in depth-first order from the first atom of each fragment. Atoms of
//! the organic subset are written bare when the SMILES rule for implicit hydrogens gives their
//! count, in brackets with the count otherwise. Stereo is not written.

use crate::element;

/// An atom of the graph to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub symbol: String,
    pub isotope: Option<u16>,
    pub charge: i8,
    /// Hydrogens attached (not present as nodes).
    pub hydrogens: u8,
}

/// A bond: its atoms (indices into the nodes) and its Kekulé order, 1 to 4.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub a: usize,
    pub b: usize,
    pub order: u8,
}

const ORGANIC: &[&str] = &["B", "C", "N", "O", "P", "S", "F", "Cl", "Br", "I"];

/// The SMILES string of the graph. Callers keep it to at most 99 rings open at once along
/// the depth-first walk (every molecule of fewer than 100 rings is).
pub fn smiles(nodes: &[Node], edges: &[Edge]) -> String {
    let walk = Walk::new(nodes, edges);
    let mut out = String::new();
    let mut digits = Digits::default();
    for root in walk.roots.iter().copied() {
        if !out.is_empty() {
            out.push('.');
        }
        write_from(&walk, root, &mut digits, &mut out);
    }
    out
}

/// Hydrogens a bare organic-subset atom gets in SMILES: up to its smallest valence that is at
/// least its bond orders (OpenSMILES).
fn implied_hydrogens(symbol: &str, bond_orders: u32) -> Option<u32> {
    let valences = element::by_symbol(symbol)?.valences;
    valences
        .iter()
        .map(|&v| u32::from(v))
        .find(|&v| v >= bond_orders)
        .map(|v| v - bond_orders)
        .or(Some(0))
}

fn atom_text(node: &Node, bond_orders: u32) -> String {
    let bare = ORGANIC.contains(&node.symbol.as_str())
        && node.charge == 0
        && node.isotope.is_none()
        && implied_hydrogens(&node.symbol, bond_orders) == Some(u32::from(node.hydrogens));
    if bare {
        return node.symbol.clone();
    }
    let mut s = String::from("[");
    if let Some(isotope) = node.isotope {
        s.push_str(&isotope.to_string());
    }
    s.push_str(&node.symbol);
    match node.hydrogens {
        0 => {}
        1 => s.push('H'),
        n => s.push_str(&format!("H{n}")),
    }
    match node.charge {
        0 => {}
        1 => s.push('+'),
        -1 => s.push('-'),
        c if c > 0 => s.push_str(&format!("+{c}")),
        c => s.push_str(&format!("-{}", -c)),
    }
    s.push(']');
    s
}

fn bond_text(order: u8) -> &'static str {
    match order {
        2 => "=",
        3 => "#",
        4 => "$",
        _ => "",
    }
}

/// The depth-first spanning forest: tree children and ring closures of every atom.
struct Walk<'a> {
    nodes: &'a [Node],
    edges: &'a [Edge],
    roots: Vec<usize>,
    /// Tree edges to children, in visiting order: (child, edge).
    children: Vec<Vec<(usize, usize)>>,
    /// Ring-closure edges at each atom, in the order their digits are written.
    closures: Vec<Vec<usize>>,
    bond_orders: Vec<u32>,
}

impl<'a> Walk<'a> {
    fn new(nodes: &'a [Node], edges: &'a [Edge]) -> Self {
        let n = nodes.len();
        let mut adjacency = vec![Vec::new(); n];
        let mut bond_orders = vec![0u32; n];
        for (i, e) in edges.iter().enumerate() {
            adjacency[e.a].push(i);
            adjacency[e.b].push(i);
            bond_orders[e.a] += u32::from(e.order);
            bond_orders[e.b] += u32::from(e.order);
        }
        let mut walk = Walk {
            nodes,
            edges,
            roots: Vec::new(),
            children: vec![Vec::new(); n],
            closures: vec![Vec::new(); n],
            bond_orders,
        };
        let mut seen = vec![false; n];
        let mut edge_done = vec![false; edges.len()];
        for root in 0..n {
            if seen[root] {
                continue;
            }
            walk.roots.push(root);
            seen[root] = true;
            // An explicit stack of (atom, next adjacency index): no recursion depth to bound.
            let mut stack = vec![(root, 0usize)];
            while let Some(&mut (atom, ref mut next)) = stack.last_mut() {
                let Some(&edge) = adjacency[atom].get(*next) else {
                    stack.pop();
                    continue;
                };
                *next += 1;
                if edge_done[edge] {
                    continue;
                }
                edge_done[edge] = true;
                let other = if edges[edge].a == atom {
                    edges[edge].b
                } else {
                    edges[edge].a
                };
                if seen[other] {
                    // A back edge to an atom already written: the ring opens there and
                    // closes here.
                    walk.closures[other].push(edge);
                    walk.closures[atom].push(edge);
                } else {
                    seen[other] = true;
                    walk.children[atom].push((other, edge));
                    stack.push((other, 0));
                }
            }
        }
        walk
    }
}

/// Ring-closure digits in use: an edge holds its digit from its opening to its closing.
#[derive(Default)]
struct Digits {
    open: Vec<(usize, u32)>,
}

impl Digits {
    fn text(&mut self, edge: usize) -> (bool, String) {
        let digit = if let Some(i) = self.open.iter().position(|&(e, _)| e == edge) {
            self.open.remove(i).1
        } else {
            let digit = (1..)
                .find(|d| !self.open.iter().any(|&(_, used)| used == *d))
                .unwrap_or(1);
            self.open.push((edge, digit));
            return (true, digit_text(digit));
        };
        (false, digit_text(digit))
    }
}

fn digit_text(d: u32) -> String {
    if d < 10 {
        d.to_string()
    } else {
        format!("%{d}")
    }
}

/// Writes the tree below `root` (iteratively: a chain of 2,000 atoms is 2,000 levels deep).
fn write_from(walk: &Walk, root: usize, digits: &mut Digits, out: &mut String) {
    enum Step {
        Atom(usize),
        Text(&'static str),
    }
    let mut todo = vec![Step::Atom(root)];
    while let Some(step) = todo.pop() {
        let atom = match step {
            Step::Text(t) => {
                out.push_str(t);
                continue;
            }
            Step::Atom(atom) => atom,
        };
        out.push_str(&atom_text(&walk.nodes[atom], walk.bond_orders[atom]));
        for &edge in &walk.closures[atom] {
            let (opening, digit) = digits.text(edge);
            // The bond order goes on the opening side only.
            if opening {
                out.push_str(bond_text(walk.edges[edge].order));
            }
            out.push_str(&digit);
        }
        // Pushed in reverse: every child but the last in a branch, the last on the main chain.
        let children = &walk.children[atom];
        for (k, &(child, edge)) in children.iter().enumerate().rev() {
            let branch = k + 1 < children.len();
            if branch {
                todo.push(Step::Text(")"));
            }
            todo.push(Step::Atom(child));
            todo.push(Step::Text(bond_text(walk.edges[edge].order)));
            if branch {
                todo.push(Step::Text("("));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(symbol: &str, hydrogens: u8) -> Node {
        Node {
            symbol: symbol.into(),
            isotope: None,
            charge: 0,
            hydrogens,
        }
    }

    fn edge(a: usize, b: usize, order: u8) -> Edge {
        Edge { a, b, order }
    }

    #[test]
    fn chains_branches_rings_and_fragments() {
        // Ethanol.
        let s = smiles(
            &[node("C", 3), node("C", 2), node("O", 1)],
            &[edge(0, 1, 1), edge(1, 2, 1)],
        );
        assert_eq!(s, "CCO");
        // Isobutane: a branch.
        let s = smiles(
            &[node("C", 1), node("C", 3), node("C", 3), node("C", 3)],
            &[edge(0, 1, 1), edge(0, 2, 1), edge(0, 3, 1)],
        );
        assert_eq!(s, "C(C)(C)C");
        // Benzene in Kekulé form: one ring closure carrying its order.
        let atoms: Vec<Node> = (0..6).map(|_| node("C", 1)).collect();
        let bonds: Vec<Edge> = (0..6)
            .map(|i| edge(i, (i + 1) % 6, if i % 2 == 0 { 2 } else { 1 }))
            .collect();
        assert_eq!(smiles(&atoms, &bonds), "C1=CC=CC=C1");
        // Two fragments.
        let s = smiles(&[node("Na", 0), node("Cl", 0)], &[]);
        assert_eq!(s, "[Na].[Cl]");
    }

    #[test]
    fn brackets_when_the_organic_rule_would_be_wrong() {
        let mut ammonium = node("N", 4);
        ammonium.charge = 1;
        assert_eq!(smiles(&[ammonium], &[]), "[NH4+]");
        let mut c13 = node("C", 4);
        c13.isotope = Some(13);
        assert_eq!(smiles(&[c13], &[]), "[13CH4]");
        // A carbene-like carbon with two hydrogens is not what bare `C` would mean.
        assert_eq!(smiles(&[node("C", 2)], &[]), "[CH2]");
        let mut dianion = node("S", 0);
        dianion.charge = -2;
        assert_eq!(smiles(&[dianion], &[]), "[S-2]");
    }

    #[test]
    fn long_chains_need_no_deep_recursion() {
        let n = 5000;
        let atoms: Vec<Node> = (0..n)
            .map(|i| node("C", if i == 0 || i == n - 1 { 3 } else { 2 }))
            .collect();
        let bonds: Vec<Edge> = (0..n - 1).map(|i| edge(i, i + 1, 1)).collect();
        assert_eq!(smiles(&atoms, &bonds), "C".repeat(n));
    }
}
