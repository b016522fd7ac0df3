//! The V3000 connection table: `M  V30` lines in `BEGIN ATOM` and `BEGIN BOND` blocks, with
//! the atom properties `CHG=`, `MASS=`, `RAD=` and `VAL=`.

use super::{Atom, MAX_ATOMS, Table, number};
use crate::Error;

pub(super) fn read(lines: &[&str]) -> Result<Table, Error> {
    let mut table = Table::default();
    let mut block = "";
    for (k, line) in lines.iter().enumerate() {
        let at = k + 1;
        let Some(body) = line.strip_prefix("M  V30 ") else {
            if line.starts_with("M  END") {
                break;
            }
            continue;
        };
        let words: Vec<&str> = body.split_whitespace().collect();
        match words.as_slice() {
            ["BEGIN", name, ..] => {
                block = if *name == "ATOM" || *name == "BOND" {
                    name
                } else {
                    ""
                }
            }
            ["END", ..] => block = "",
            [_, symbol, _, _, _, _, props @ ..] if block == "ATOM" => {
                if table.atoms.len() == MAX_ATOMS {
                    return Err(Error::new(format!(
                        "at most {MAX_ATOMS} atoms are accepted"
                    )));
                }
                let mut atom = Atom {
                    symbol: (*symbol).to_owned(),
                    isotope: None,
                    charge: 0,
                    radical: 0,
                    valence: None,
                };
                for prop in props {
                    let Some((key, value)) = prop.split_once('=') else {
                        continue;
                    };
                    let value: i32 = match key {
                        "CHG" | "MASS" | "RAD" | "VAL" => number(value, key, at)?,
                        _ => continue,
                    };
                    match key {
                        "CHG" => atom.charge = value.clamp(-15, 15) as i8,
                        "MASS" => atom.isotope = u16::try_from(value).ok(),
                        "RAD" => atom.radical = if value == 2 { 1 } else { 2 },
                        _ => atom.valence = Some(if value == -1 { 0 } else { value as u8 }),
                    }
                }
                table.atoms.push(atom);
            }
            [_, order, a, b, ..] if block == "BOND" => {
                let order = number(order, "bond type", at)?;
                table.add_bond(
                    number(a, "atom number", at)?,
                    number(b, "atom number", at)?,
                    order,
                    at,
                )?;
            }
            _ => {}
        }
    }
    Ok(table)
}
