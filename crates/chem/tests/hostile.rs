//! No input, however hostile, may panic or run away: random and mutated SMILES by the
//! tens of thousands, checked natively (fast) for panics and bounded time.

use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn all_descriptors(s: &str) {
    if let Ok(m) = chem::smiles::parse(s) {
        let _ = chem::descriptors::formula(&m);
        let _ = chem::descriptors::mol_weight(&m);
        let _ = chem::descriptors::aromatic_rings(&m);
        let _ = chem::rotatable::count(&m);
        let _ = chem::tpsa::tpsa(&m);
    }
}

#[test]
fn random_and_mutated_inputs_never_panic_and_stay_fast() {
    let seeds = [
        "CC(=O)Oc1ccccc1C(=O)O",
        "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
        "[13CH3][N+](C)(C)C.[Cl-]",
        "C%10CC%11CC%10CC%11",
        "c1ccc2c(c1)[nH]c1ccccc12",
        "F/C=C/[C@@H](Br)I",
    ];
    let alphabet: Vec<char> = "CNOSPFBIclnospb()[]=#$:/\\@+-.%0123456789Hh*Xx é"
        .chars()
        .collect();
    let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
    let started = Instant::now();
    for i in 0..30_000 {
        let s: String = if i % 3 == 0 {
            (0..rng.next(40))
                .map(|_| alphabet[rng.next(alphabet.len())])
                .collect()
        } else {
            let mut v: Vec<char> = seeds[i % seeds.len()].chars().collect();
            for _ in 0..1 + rng.next(5) {
                let pos = rng.next(v.len() + 1);
                let c = alphabet[rng.next(alphabet.len())];
                match rng.next(3) {
                    0 if pos < v.len() => {
                        v.remove(pos);
                    }
                    1 => v.insert(pos, c),
                    _ if pos < v.len() => v[pos] = c,
                    _ => {}
                }
            }
            v.into_iter().collect()
        };
        let t = Instant::now();
        all_descriptors(&s);
        assert!(
            t.elapsed() < Duration::from_millis(200),
            "{s:?} took {:?}",
            t.elapsed()
        );
    }
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn pathological_shapes_are_bounded() {
    // Long chains, many rings, deep branches, huge aromatic systems.
    let chain = "C".repeat(1999);
    all_descriptors(&chain);
    let branches = format!("C{}", "(C".repeat(600) + &")".repeat(600));
    all_descriptors(&branches);
    let rings: String = (0..300)
        .map(|i| format!("C{}CC{}", i % 10, i % 10))
        .collect();
    all_descriptors(&rings);
    // Two rings of about 1,000 atoms sharing a bond: ring perception walks paths that long.
    let theta = format!("C12{}C1{}C2", "C".repeat(994), "C".repeat(993));
    all_descriptors(&theta);
    let graphite = "c1ccc2cc3ccc4ccc5ccc6ccc1c7c2c3c4c5c67".repeat(3);
    all_descriptors(&graphite);
    assert!(chem::smiles::parse(&"C".repeat(2001)).is_err(), "atom cap");
}

/// Molfiles with lines cut, swapped, duplicated and bytes changed: every one is a SMILES
/// string or an error, never a panic, and the SMILES written always parses or is refused
/// with a message.
#[test]
fn mutated_molfiles_never_panic() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/solubility/solubility.test.sdf"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let records: Vec<&str> = text.split("$$$$").take(40).collect();
    let alphabet: Vec<char> = "0123456789 -CNOHQ*AV3MCHGISORAD=\n.é".chars().collect();
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let started = Instant::now();
    for round in 0..20_000 {
        let mut lines: Vec<String> = records[round % records.len()]
            .lines()
            .map(str::to_owned)
            .collect();
        for _ in 0..1 + rng.next(4) {
            let i = rng.next(lines.len());
            match rng.next(4) {
                0 => {
                    lines.remove(i);
                }
                1 => lines.insert(i, lines[i].clone()),
                _ => {
                    let mut chars: Vec<char> = lines[i].chars().collect();
                    let at = rng.next(chars.len() + 1);
                    chars.insert(at, alphabet[rng.next(alphabet.len())]);
                    lines[i] = chars.into_iter().collect();
                }
            }
            if lines.is_empty() {
                break;
            }
        }
        let molfile = lines.join("\n");
        if let Ok(smiles) = chem::molfile::to_smiles(&molfile) {
            all_descriptors(&smiles);
        }
    }
    assert!(started.elapsed() < Duration::from_secs(30));
}
