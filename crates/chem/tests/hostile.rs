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
    let graphite = "c1ccc2cc3ccc4ccc5ccc6ccc1c7c2c3c4c5c67".repeat(3);
    all_descriptors(&graphite);
    assert!(chem::smiles::parse(&"C".repeat(2001)).is_err(), "atom cap");
}
