//! How well molecules draw: on the held-out drug-like set (`shared/testdata`), the
//! solubility model's test set and 3,000 molecules of RDKit's sample sets, the share drawn
//! with no atoms on top of each other (closer than half a bond) and with no crossing
//! bonds, printed per set. Issue 28's test set is the first: it must draw without overlaps.

use chem::depict::{self, tidy};
use std::path::{Path, PathBuf};

fn smiles_column(file: &Path, column: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let at = header
        .iter()
        .position(|h| *h == column)
        .unwrap_or_else(|| panic!("{} has no column {column}", file.display()));
    lines
        .filter_map(|l| l.split('\t').nth(at).map(str::to_owned))
        .collect()
}

struct Tally {
    molecules: usize,
    without_overlap: usize,
    without_crossing: usize,
    worst: Vec<(usize, String)>,
    /// Time to lay out and draw them all (SVG included).
    took: std::time::Duration,
}

fn tally(smiles: &[String]) -> Tally {
    let mut t = Tally {
        molecules: 0,
        without_overlap: 0,
        without_crossing: 0,
        worst: Vec::new(),
        took: std::time::Duration::ZERO,
    };
    let started = std::time::Instant::now();
    for s in smiles {
        let Ok(mol) = chem::smiles::parse(s) else {
            continue;
        };
        let coords = depict::coordinates(&mol);
        std::hint::black_box(depict::svg::render(
            &mol,
            &coords,
            &depict::svg::Caption { title: s },
        ));
        assert!(
            coords.iter().all(|p| p.x.is_finite() && p.y.is_finite()),
            "{s}: coordinates not finite"
        );
        for bond in &mol.bonds {
            let d = coords[bond.a].distance(coords[bond.b]);
            assert!((0.5..2.0).contains(&d), "{s}: a bond {d:.2} long");
        }
        let overlaps = tidy::overlapping_atoms(&coords);
        let crossings = tidy::crossing_bonds(&mol, &coords);
        t.molecules += 1;
        t.without_overlap += usize::from(overlaps == 0);
        t.without_crossing += usize::from(crossings == 0);
        if overlaps > 0 {
            t.worst.push((overlaps, s.clone()));
        }
    }
    t.took = started.elapsed();
    t.worst.sort_by_key(|w| std::cmp::Reverse(w.0));
    t
}

fn report(name: &str, t: &Tally) {
    let pct = |n: usize| 100.0 * n as f64 / t.molecules.max(1) as f64;
    println!(
        "{name}: {} molecules, {} ({:.1}%) without overlapping atoms, {} ({:.1}%) without crossing bonds; \
         laid out and drawn in {:.1} ms ({:.0} us each, this build's profile)",
        t.molecules,
        t.without_overlap,
        pct(t.without_overlap),
        t.without_crossing,
        pct(t.without_crossing),
        t.took.as_secs_f64() * 1e3,
        t.took.as_secs_f64() * 1e6 / t.molecules.max(1) as f64
    );
    for (n, s) in t.worst.iter().take(5) {
        println!("  {n} overlapping pair(s): {s}");
    }
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_held_out_drug_like_set_draws_without_overlaps() {
    let file = manifest_dir().join("../../../shared/testdata/molprop-reference.tsv");
    let t = tally(&smiles_column(&file, "smiles"));
    report("shared/testdata (held out)", &t);
    assert_eq!(t.molecules, 144);
    assert!(
        t.without_overlap * 100 >= t.molecules * 98,
        "at least 98% must draw without overlapping atoms"
    );
}

#[test]
fn larger_sets_draw_mostly_without_overlaps() {
    let solubility = manifest_dir().join("../../models/solubility/test_set.tsv");
    let t = tally(&smiles_column(&solubility, "smiles"));
    report("solubility test set", &t);
    assert!(t.without_overlap * 100 >= t.molecules * 95);
    let samples = manifest_dir().join("tests/data/rdkit-samples.tsv");
    let t = tally(&smiles_column(&samples, "smiles"));
    report("RDKit sample sets", &t);
    assert!(t.without_overlap * 100 >= t.molecules * 95);
}

#[test]
fn the_svg_labels_heteroatoms_charges_and_hydrogens() {
    let mol = chem::smiles::parse("C[N+](C)(C)CC(=O)[O-]").unwrap();
    let svg = depict::to_svg(&mol, "betaine <&>");
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert!(svg.contains("<title>betaine &lt;&amp;&gt;</title>"));
    assert_eq!(svg.matches("class=\"bond\"").count(), mol.bonds.len());
    assert_eq!(
        svg.matches("class=\"atom\"").count(),
        3,
        "N+, two O and nothing else"
    );
    assert!(svg.contains(">+</tspan>") && svg.contains(">\u{2212}</tspan>"));
    let phenol = depict::to_svg(&chem::smiles::parse("Oc1ccccc1").unwrap(), "phenol");
    assert!(phenol.contains("OH") || phenol.contains("HO"), "{phenol}");
    assert_eq!(
        phenol.matches("data-order=\"2\"").count(),
        3,
        "Kekulé benzene"
    );
}
