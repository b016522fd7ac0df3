//! The drawing as SVG: bonds as lines (double bonds of a ring drawn inside it, others side by
//! side; aromatic rings in their Kekulé form), atoms other than carbon labelled with their
//! hydrogens, charge and isotope, in the usual element colours. Self-contained (no script,
//! no external font or style), with a title for screen readers.

use super::geometry::{Point, centroid};
use super::layout::bounds;
use crate::molecule::Molecule;
use std::fmt::Write;

/// Pixels per bond length.
const BOND_PX: f64 = 34.0;
/// Space around the drawing, in bond lengths.
const MARGIN: f64 = 0.9;
/// Label text size, in pixels.
const FONT_PX: f64 = 15.0;

/// What the picture says about itself.
pub struct Caption<'a> {
    /// The title (screen readers, tooltips): usually the SMILES drawn.
    pub title: &'a str,
}

/// The SVG document drawing `mol` at `coords`.
pub fn render(mol: &Molecule, coords: &[Point], caption: &Caption<'_>) -> String {
    let (min_x, max_x, min_y, max_y) = bounds(coords.iter().copied());
    let width = (max_x - min_x + 2.0 * MARGIN) * BOND_PX;
    let height = (max_y - min_y + 2.0 * MARGIN) * BOND_PX;
    let at = |p: Point| {
        Point::new(
            (p.x - min_x + MARGIN) * BOND_PX,
            (p.y - min_y + MARGIN) * BOND_PX,
        )
    };
    let labels: Vec<Option<Label>> = (0..mol.atoms.len())
        .map(|a| label(mol, coords, a))
        .collect();
    let mut out = String::new();
    let title = escape(caption.title);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"molecule\" role=\"img\" \
         aria-label=\"Structure of {title}\" viewBox=\"0 0 {width:.1} {height:.1}\" \
         width=\"{width:.0}\" height=\"{height:.0}\" data-atoms=\"{}\" data-bonds=\"{}\">\
         <title>{title}</title>\
         <g stroke=\"#222\" stroke-width=\"1.6\" stroke-linecap=\"round\">",
        mol.atoms.len(),
        mol.bonds.len()
    );
    let ring_centres = ring_centres(mol, coords);
    for (b, bond) in mol.bonds.iter().enumerate() {
        let (mut p, mut q) = (at(coords[bond.a]), at(coords[bond.b]));
        // Stop short of labels.
        let dir = (q - p).unit_or(Point::new(1.0, 0.0));
        if labels[bond.a].is_some() {
            p = p + dir * (0.32 * BOND_PX);
        }
        if labels[bond.b].is_some() {
            q = q - dir * (0.32 * BOND_PX);
        }
        let offset = dir.normal() * (0.16 * BOND_PX);
        let _ = write!(out, "<g class=\"bond\" data-order=\"{}\">", bond.kekule);
        match bond.kekule {
            2 => match ring_centres[b].map(at) {
                Some(centre) => {
                    line(&mut out, p, q);
                    let inward = if (centre - p).dot(offset) > 0.0 {
                        offset
                    } else {
                        offset * -1.0
                    };
                    let trim = dir * (0.14 * BOND_PX);
                    line(&mut out, p + inward + trim, q + inward - trim);
                }
                None => {
                    line(&mut out, p + offset * 0.5, q + offset * 0.5);
                    line(&mut out, p - offset * 0.5, q - offset * 0.5);
                }
            },
            3 => {
                line(&mut out, p, q);
                line(&mut out, p + offset * 0.8, q + offset * 0.8);
                line(&mut out, p - offset * 0.8, q - offset * 0.8);
            }
            _ => line(&mut out, p, q),
        }
        out.push_str("</g>");
    }
    out.push_str("</g><g font-family=\"Helvetica, Arial, sans-serif\" text-anchor=\"middle\" dominant-baseline=\"central\">");
    for (a, l) in labels.iter().enumerate() {
        if let Some(l) = l {
            write_label(&mut out, at(coords[a]), l);
        }
    }
    out.push_str("</g></svg>");
    out
}

fn line(out: &mut String, p: Point, q: Point) {
    let _ = write!(
        out,
        "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
        p.x, p.y, q.x, q.y
    );
}

/// For each ring bond, the centre of the smallest ring holding it (double bonds are drawn
/// on that side).
fn ring_centres(mol: &Molecule, coords: &[Point]) -> Vec<Option<Point>> {
    let mut best: Vec<Option<(usize, Point)>> = vec![None; mol.bonds.len()];
    for ring in mol.rings() {
        let c = centroid(ring.atoms.iter().map(|&a| coords[a]));
        for &b in &ring.bonds {
            if best[b].is_none_or(|(size, _)| ring.atoms.len() < size) {
                best[b] = Some((ring.atoms.len(), c));
            }
        }
    }
    best.into_iter().map(|x| x.map(|(_, c)| c)).collect()
}

/// An atom's label: element, hydrogens (before it when the bonds leave to the right),
/// charge, isotope.
struct Label {
    symbol: &'static str,
    hydrogens: u32,
    hydrogens_first: bool,
    charge: i8,
    isotope: Option<u16>,
    colour: &'static str,
}

fn label(mol: &Molecule, coords: &[Point], a: usize) -> Option<Label> {
    let atom = &mol.atoms[a];
    let degree = mol.adjacency[a].len();
    let carbon = atom.element.number == 6;
    if carbon && atom.charge == 0 && atom.isotope.is_none() && degree > 0 {
        return None;
    }
    let hydrogens = u32::from(atom.hydrogens);
    let to_right = mol
        .neighbours(a)
        .map(|n| coords[n].x - coords[a].x)
        .sum::<f64>();
    Some(Label {
        symbol: atom.element.symbol,
        hydrogens,
        hydrogens_first: degree > 0 && to_right > 0.1,
        charge: atom.charge,
        isotope: atom.isotope,
        colour: colour(atom.element.number),
    })
}

/// Element colours (the common CPK-like scheme), darkened enough to read on white.
fn colour(number: u8) -> &'static str {
    match number {
        7 => "#2349d1",
        8 => "#d11a1a",
        9 | 17 => "#1b8a1b",
        35 => "#8b2a12",
        53 => "#7a1f9a",
        15 => "#c46200",
        16 => "#9a8000",
        5 => "#b36b5e",
        _ => "#222",
    }
}

fn write_label(out: &mut String, at: Point, l: &Label) {
    let mut text = String::new();
    if let Some(iso) = l.isotope {
        let _ = write!(
            text,
            "<tspan font-size=\"10\" dy=\"-5\">{iso}</tspan><tspan dy=\"5\">"
        );
    }
    let hydrogens = match l.hydrogens {
        0 => String::new(),
        1 => "H".to_owned(),
        n => format!("H<tspan font-size=\"10\" dy=\"4\">{n}</tspan><tspan dy=\"-4\"></tspan>"),
    };
    if l.hydrogens_first {
        let _ = write!(text, "{hydrogens}{}", l.symbol);
    } else {
        let _ = write!(text, "{}{hydrogens}", l.symbol);
    }
    if l.isotope.is_some() {
        text.push_str("</tspan>");
    }
    if l.charge != 0 {
        let sign = if l.charge > 0 { "+" } else { "\u{2212}" };
        let size = l.charge.unsigned_abs();
        let amount = if size > 1 {
            size.to_string()
        } else {
            String::new()
        };
        let _ = write!(
            text,
            "<tspan font-size=\"10\" dy=\"-6\">{amount}{sign}</tspan>"
        );
    }
    // The label's anchor is its element symbol: hydrogens written before it shift it right.
    let shift = if l.hydrogens_first && l.hydrogens > 0 {
        -FONT_PX * if l.hydrogens > 1 { 0.55 } else { 0.35 }
    } else if l.hydrogens > 0 {
        FONT_PX * if l.hydrogens > 1 { 0.55 } else { 0.35 }
    } else {
        0.0
    };
    let _ = write!(
        out,
        "<g class=\"atom\"><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{:.1}\" fill=\"#fff\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{FONT_PX}\" fill=\"{}\">{text}</text></g>",
        at.x,
        at.y,
        FONT_PX * 0.55,
        at.x + shift,
        at.y,
        l.colour
    );
}

/// `text` safe inside XML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
