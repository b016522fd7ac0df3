//! Molecules drawn: 2D coordinates for a molecule's atoms and an SVG picture of them.
//!
//! The layout is the classic one of structure-drawing programs, written here from the
//! description of the method (Helson, "Structure diagram generation", Rev. Comput. Chem.
//! 1999; CDK's and RDKit's depictors follow the same plan): ring systems as regular
//! polygons fused edge to edge ([`ring_systems`]), chains in a 120-degree zigzag and
//! substituents spread into the widest free angle ([`layout`]), then branches flipped or
//! turned about acyclic bonds to clear what still overlaps ([`tidy`]). [`svg`] draws it.
//!
//! Plain Rust like the rest of the crate: the console component serves the pictures, so
//! they look the same under Spin and `runtime-host`, and need no JavaScript.

pub mod geometry;
pub mod layout;
pub mod ring_systems;
pub mod svg;
pub mod tidy;

use crate::molecule::Molecule;
pub use geometry::Point;

/// Coordinates of every atom of `mol` (bond length 1.0), overlaps cleared where the search
/// can.
pub fn coordinates(mol: &Molecule) -> Vec<Point> {
    let mut coords = layout::coordinates(mol);
    tidy::clear_overlaps(mol, &mut coords);
    coords
}

/// `mol` drawn as an SVG document titled `title` (usually its SMILES).
pub fn to_svg(mol: &Molecule, title: &str) -> String {
    let coords = coordinates(mol);
    svg::render(mol, &coords, &svg::Caption { title })
}
