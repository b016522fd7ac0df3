//! Element data: symbol, atomic number, masses, and the default valences SMILES uses to
//! derive implicit hydrogens.
//!
//! Average atomic weights are the values RDKit's periodic table uses (IUPAC conventional
//! weights; e.g. S 32.067), so `mol_weight` agrees with RDKit's `Descriptors.MolWt`.
//! Monoisotopic masses are those of the most abundant isotope (AME 2016 / NIST), as RDKit's
//! `ExactMolWt` uses. Only elements found in drug-like molecules and their salts are listed;
//! others are refused with a clear error rather than guessed.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Element {
    pub symbol: &'static str,
    pub number: u8,
    pub average_mass: f64,
    pub monoisotopic_mass: f64,
    /// Valences for implicit hydrogens of organic-subset atoms (OpenSMILES), smallest first.
    pub valences: &'static [u8],
}

macro_rules! el {
    ($s:literal, $z:literal, $avg:literal, $mono:literal, [$($v:literal),*]) => {
        Element { symbol: $s, number: $z, average_mass: $avg, monoisotopic_mass: $mono, valences: &[$($v),*] }
    };
}

pub const ELEMENTS: &[Element] = &[
    el!("H", 1, 1.008, 1.007_825_032_07, [1]),
    el!("Li", 3, 6.941, 7.016_004_55, [1]),
    el!("B", 5, 10.812, 11.009_305_4, [3]),
    el!("C", 6, 12.011, 12.0, [4]),
    el!("N", 7, 14.007, 14.003_074_004_8, [3, 5]),
    el!("O", 8, 15.999, 15.994_914_619_56, [2]),
    el!("F", 9, 18.998, 18.998_403_22, [1]),
    el!("Na", 11, 22.99, 22.989_769_280_9, [1]),
    el!("Mg", 12, 24.305, 23.985_041_7, [2]),
    el!("Al", 13, 26.982, 26.981_538_63, [3]),
    el!("Si", 14, 28.086, 27.976_926_532_5, [4]),
    el!("P", 15, 30.974, 30.973_761_63, [3, 5]),
    el!("S", 16, 32.067, 31.972_071, [2, 4, 6]),
    el!("Cl", 17, 35.453, 34.968_852_68, [1]),
    el!("K", 19, 39.098, 38.963_706_68, [1]),
    el!("Ca", 20, 40.078, 39.962_590_98, [2]),
    el!("Fe", 26, 55.845, 55.934_942_1, [2, 3]),
    el!("Cu", 29, 63.546, 62.929_597_5, [1, 2]),
    el!("Zn", 30, 65.39, 63.929_142_2, [2]),
    el!("As", 33, 74.922, 74.921_596_5, [3, 5]),
    el!("Se", 34, 78.971, 79.916_521_3, [2, 4, 6]),
    el!("Br", 35, 79.904, 78.918_337_1, [1]),
    el!("I", 53, 126.904, 126.904_473, [1]),
];

/// Every element symbol of the periodic table, so that "not supported" and "not an element"
/// are told apart in error messages.
const ALL_SYMBOLS: &[&str] = &[
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl",
    "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As",
    "Se", "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In",
    "Sn", "Sb", "Te", "I", "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb",
    "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl",
    "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U", "Np", "Pu", "Am", "Cm", "Bk",
    "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db", "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh",
    "Fl", "Mc", "Lv", "Ts", "Og",
];

pub fn by_symbol(symbol: &str) -> Option<&'static Element> {
    ELEMENTS.iter().find(|e| e.symbol == symbol)
}

pub fn is_element_symbol(symbol: &str) -> bool {
    ALL_SYMBOLS.contains(&symbol)
}

/// Masses of isotopes written in SMILES (`[13C]`, `[2H]`, ...), NIST values. For an isotope
/// not listed, its mass number is used (off by under 0.1 Da).
pub fn isotope_mass(number: u8, mass_number: u16) -> f64 {
    const TABLE: &[(u8, u16, f64)] = &[
        (1, 1, 1.007_825_032_07),
        (1, 2, 2.014_101_778_12),
        (1, 3, 3.016_049_277_9),
        (6, 11, 11.011_433_6),
        (6, 12, 12.0),
        (6, 13, 13.003_354_835_07),
        (6, 14, 14.003_241_988_4),
        (7, 14, 14.003_074_004_8),
        (7, 15, 15.000_108_898_88),
        (8, 16, 15.994_914_619_56),
        (8, 17, 16.999_131_756_5),
        (8, 18, 17.999_159_612_86),
        (9, 18, 18.000_938_0),
        (9, 19, 18.998_403_22),
        (15, 32, 31.973_907_64),
        (16, 34, 33.967_866_9),
        (16, 35, 34.969_032_31),
        (17, 35, 34.968_852_68),
        (17, 37, 36.965_902_59),
        (35, 79, 78.918_337_1),
        (35, 81, 80.916_290_6),
        (53, 123, 122.905_589),
        (53, 125, 124.904_629_4),
        (53, 127, 126.904_473),
        (53, 131, 130.906_124),
    ];
    TABLE
        .iter()
        .find(|(z, a, _)| *z == number && *a == mass_number)
        .map(|(_, _, m)| *m)
        .unwrap_or(f64::from(mass_number))
}

/// Mass of an electron in daltons (CODATA), removed per positive charge in exact masses.
pub const ELECTRON_MASS: f64 = 0.000_548_579_909_07;
