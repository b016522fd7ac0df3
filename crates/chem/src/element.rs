//! Element data: symbol, atomic number, masses, and the default valences SMILES uses to
//! derive implicit hydrogens.
//!
//! Average atomic weights and most-abundant-isotope masses are the values of RDKit 2026.09.1's
//! periodic table (e.g. S 32.067, Se 78.96), so `mol_weight` and `exact_mass` agree with
//! RDKit's `Descriptors.MolWt` and `ExactMolWt`. Valences of the organic subset are
//! OpenSMILES' (they decide implicit hydrogens); other elements carry RDKit's valence list,
//! and those without one (most metals) are never valence-checked.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Element {
    pub symbol: &'static str,
    pub number: u8,
    pub average_mass: f64,
    pub monoisotopic_mass: f64,
    /// Allowed valences, smallest first (OpenSMILES for the organic subset); empty when the
    /// element has no fixed valence.
    pub valences: &'static [u8],
}

macro_rules! el {
    ($s:literal, $z:literal, $avg:literal, $mono:literal, [$($v:literal),*]) => {
        Element { symbol: $s, number: $z, average_mass: $avg, monoisotopic_mass: $mono, valences: &[$($v),*] }
    };
}

pub const ELEMENTS: &[Element] = &[
    el!("H", 1, 1.008, 1.007825032, [1]),
    el!("He", 2, 4.003, 4.002603254, [0]),
    el!("Li", 3, 6.941, 7.01600455, [1]),
    el!("Be", 4, 9.012, 9.0121822, [2]),
    el!("B", 5, 10.812, 11.0093054, [3]),
    el!("C", 6, 12.011, 12.0, [4]),
    el!("N", 7, 14.007, 14.003074, [3, 5]),
    el!("O", 8, 15.999, 15.99491462, [2]),
    el!("F", 9, 18.998, 18.99840322, [1]),
    el!("Ne", 10, 20.18, 19.99244018, [0]),
    el!("Na", 11, 22.99, 22.98976928, [1]),
    el!("Mg", 12, 24.305, 23.9850417, [2]),
    el!("Al", 13, 26.982, 26.98153863, [3]),
    el!("Si", 14, 28.086, 27.97692653, [4]),
    el!("P", 15, 30.974, 30.97376163, [3, 5]),
    el!("S", 16, 32.067, 31.972071, [2, 4, 6]),
    el!("Cl", 17, 35.453, 34.96885268, [1]),
    el!("Ar", 18, 39.948, 39.96238312, [0]),
    el!("K", 19, 39.098, 38.96370668, [1]),
    el!("Ca", 20, 40.078, 39.96259098, [2]),
    el!("Sc", 21, 44.956, 44.9559119, []),
    el!("Ti", 22, 47.867, 47.9479463, []),
    el!("V", 23, 50.944, 50.9439595, []),
    el!("Cr", 24, 51.996, 51.9405075, []),
    el!("Mn", 25, 54.938, 54.9380451, []),
    el!("Fe", 26, 55.845, 55.9349375, []),
    el!("Co", 27, 58.933, 58.933195, []),
    el!("Ni", 28, 58.693, 57.9353429, []),
    el!("Cu", 29, 63.546, 62.9295975, []),
    el!("Zn", 30, 65.39, 63.9291422, []),
    el!("Ga", 31, 69.723, 68.9255736, [3]),
    el!("Ge", 32, 72.61, 73.9211778, [4]),
    el!("As", 33, 74.922, 74.9215965, [3, 5]),
    el!("Se", 34, 78.96, 79.9165213, [2, 4, 6]),
    el!("Br", 35, 79.904, 78.9183371, [1]),
    el!("Kr", 36, 83.8, 83.911507, [0]),
    el!("Rb", 37, 85.468, 84.91178974, [1]),
    el!("Sr", 38, 87.62, 87.9056121, [2]),
    el!("Y", 39, 88.906, 88.9058483, []),
    el!("Zr", 40, 91.224, 89.9047044, []),
    el!("Nb", 41, 92.906, 92.9063781, []),
    el!("Mo", 42, 95.94, 97.9054082, []),
    el!("Tc", 43, 98.0, 96.906365, []),
    el!("Ru", 44, 101.07, 101.9043493, []),
    el!("Rh", 45, 102.906, 102.905504, []),
    el!("Pd", 46, 106.42, 105.903486, []),
    el!("Ag", 47, 107.868, 106.905097, []),
    el!("Cd", 48, 112.412, 113.9033585, []),
    el!("In", 49, 114.818, 114.903878, [3]),
    el!("Sn", 50, 118.711, 119.9021947, [2, 4]),
    el!("Sb", 51, 121.76, 120.9038157, [3, 5]),
    el!("Te", 52, 127.6, 129.9062244, [2, 4, 6]),
    el!("I", 53, 126.904, 126.904473, [1]),
    el!("Xe", 54, 131.29, 131.9041535, [0, 2, 4, 6]),
    el!("Cs", 55, 132.905, 132.9054519, [1]),
    el!("Ba", 56, 137.328, 137.9052472, [2]),
    el!("La", 57, 138.906, 138.9063533, []),
    el!("Ce", 58, 140.116, 139.9054387, []),
    el!("Pr", 59, 140.908, 140.9076528, []),
    el!("Nd", 60, 144.24, 141.9077233, []),
    el!("Pm", 61, 145.0, 144.912749, []),
    el!("Sm", 62, 150.36, 151.9197324, []),
    el!("Eu", 63, 151.964, 152.9212303, []),
    el!("Gd", 64, 157.25, 157.9241039, []),
    el!("Tb", 65, 158.925, 158.9253468, []),
    el!("Dy", 66, 162.5, 163.9291748, []),
    el!("Ho", 67, 164.93, 164.9303221, []),
    el!("Er", 68, 167.26, 165.9302931, []),
    el!("Tm", 69, 168.934, 168.9342133, []),
    el!("Yb", 70, 173.04, 173.9388621, []),
    el!("Lu", 71, 174.967, 174.9407718, []),
    el!("Hf", 72, 178.49, 179.94655, []),
    el!("Ta", 73, 180.948, 180.9479958, []),
    el!("W", 74, 183.84, 183.9509312, []),
    el!("Re", 75, 186.207, 186.9557531, []),
    el!("Os", 76, 190.23, 191.9614807, []),
    el!("Ir", 77, 192.217, 192.9629264, []),
    el!("Pt", 78, 195.078, 194.9647911, []),
    el!("Au", 79, 196.967, 196.9665687, []),
    el!("Hg", 80, 200.59, 201.970643, []),
    el!("Tl", 81, 204.383, 204.9744275, []),
    el!("Pb", 82, 207.2, 207.9766521, [2, 4]),
    el!("Bi", 83, 208.98, 208.9803987, [3, 5]),
    el!("Po", 84, 209.0, 208.9824304, [2, 4, 6]),
    el!("At", 85, 210.0, 209.987148, [1, 3, 5]),
    el!("Rn", 86, 222.0, 222.0175706, [0]),
    el!("Fr", 87, 223.0, 223.0197359, [1]),
    el!("Ra", 88, 226.0, 226.0254026, [2]),
    el!("Ac", 89, 227.0, 227.0277521, []),
    el!("Th", 90, 232.038, 232.0380553, []),
    el!("Pa", 91, 231.036, 231.035884, []),
    el!("U", 92, 238.029, 238.0507882, []),
    el!("Np", 93, 237.0, 236.04657, []),
    el!("Pu", 94, 244.0, 238.0495599, []),
    el!("Am", 95, 243.0, 241.0568291, []),
    el!("Cm", 96, 247.0, 243.0613891, []),
    el!("Bk", 97, 247.0, 247.070307, []),
    el!("Cf", 98, 251.0, 249.0748535, []),
    el!("Es", 99, 252.0, 252.08298, []),
    el!("Fm", 100, 257.0, 257.095105, []),
    el!("Md", 101, 258.0, 258.098431, []),
    el!("No", 102, 259.0, 259.10103, []),
    el!("Lr", 103, 262.0, 262.10963, []),
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
    // Compared as numbers: a string comparison per element was a call to the C library's
    // byte-by-byte `memcmp` in the WebAssembly build, about 3 % of a logP prediction.
    let wanted = symbol_code(symbol)?;
    ELEMENTS
        .iter()
        .find(|e| symbol_code(e.symbol) == Some(wanted))
}

/// An element symbol (one or two letters) as one number, its length included (so that "C"
/// and "C\0" differ); `None` for anything longer.
fn symbol_code(symbol: &str) -> Option<u32> {
    match *symbol.as_bytes() {
        [a] => Some(1 << 16 | u32::from(a)),
        [a, b] => Some(2 << 16 | u32::from(b) << 8 | u32::from(a)),
        _ => None,
    }
}

/// Allowed valences of `element` carrying `charge`: those of its isoelectronic neutral
/// element (N+ like C, O- like F, C- like N), else its own.
pub fn valences_with_charge(element: &Element, charge: i8) -> &'static [u8] {
    let z = i32::from(element.number) - i32::from(charge);
    ELEMENTS
        .iter()
        .find(|e| i32::from(e.number) == z)
        .map(|e| e.valences)
        .unwrap_or(element.valences)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_found_by_its_symbol_and_nothing_else_is() {
        for e in ELEMENTS {
            assert!(
                e.symbol.len() <= 2,
                "{} is longer than a code holds",
                e.symbol
            );
            assert_eq!(by_symbol(e.symbol).map(|f| f.number), Some(e.number));
        }
        for other in ["", "c", "CL", "Cll", "Xx", "Uue", "C\0", "\u{e9}"] {
            assert!(by_symbol(other).is_none(), "{other:?} was found");
        }
    }
}
