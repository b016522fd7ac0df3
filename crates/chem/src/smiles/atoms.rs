//! The atoms of a SMILES string: the organic subset written bare (`C`, `Cl`, `c`) and
//! bracket atoms (`[13CH3+]`), with the errors that name what is not supported.

use super::Parser;
use crate::Error;
use crate::element::{self, Element};
use crate::molecule::Atom;

/// A bare organic-subset atom at `c` (with the character after it): its symbol, whether it
/// is aromatic, and how many characters it takes.
pub(super) fn organic(c: char, next: Option<char>) -> Option<(&'static str, bool, usize)> {
    Some(match (c, next) {
        ('C', Some('l')) => ("Cl", false, 2),
        ('B', Some('r')) => ("Br", false, 2),
        ('B', _) => ("B", false, 1),
        ('C', _) => ("C", false, 1),
        ('N', _) => ("N", false, 1),
        ('O', _) => ("O", false, 1),
        ('P', _) => ("P", false, 1),
        ('S', _) => ("S", false, 1),
        ('F', _) => ("F", false, 1),
        ('I', _) => ("I", false, 1),
        ('b', _) => ("B", true, 1),
        ('c', _) => ("C", true, 1),
        ('n', _) => ("N", true, 1),
        ('o', _) => ("O", true, 1),
        ('p', _) => ("P", true, 1),
        ('s', _) => ("S", true, 1),
        _ => return None,
    })
}

/// The element `symbol` names, or why it cannot be read here.
pub(super) fn supported(symbol: &str, position: usize) -> Result<&'static Element, Error> {
    element::by_symbol(symbol).ok_or_else(|| {
        if element::is_element_symbol(symbol) {
            Error::at(
                position,
                format!("element `{symbol}` is not supported by this model"),
            )
        } else {
            Error::at(position, format!("unknown element `{symbol}`"))
        }
    })
}

impl Parser<'_> {
    /// The digits at the cursor as a number (saturating: every digit is read, so a long
    /// number is one token and its caller can say it is too large).
    fn number(&mut self) -> Option<u64> {
        let start = self.i;
        let mut n: u64 = 0;
        while let Some(d) = self.peek(0).and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(u64::from(d));
            self.i += 1;
        }
        (self.i > start).then_some(n)
    }

    /// `[` isotope? symbol chirality? hcount? charge? class? `]`
    pub(super) fn bracket_atom(&mut self) -> Result<Atom, Error> {
        let open = self.pos();
        self.i += 1;
        let isotope = match self.number() {
            Some(n) if n > 9999 => {
                return Err(Error::at(
                    open + 1,
                    format!("isotope {n} is not a mass number (at most 9999)"),
                ));
            }
            n => n.map(|n| n as u16),
        };
        let at = self.pos();
        let (symbol, aromatic) = match (self.peek(0), self.peek(1)) {
            (Some(a), Some(b))
                if a.is_ascii_lowercase()
                    && ["se", "as", "te"].contains(&format!("{a}{b}").as_str()) =>
            {
                self.i += 2;
                let mut s = a.to_ascii_uppercase().to_string();
                s.push(b);
                (s, true)
            }
            (Some(a), _) if "bcnops".contains(a) => {
                self.i += 1;
                (a.to_ascii_uppercase().to_string(), true)
            }
            (Some(a), Some(b))
                if a.is_ascii_uppercase()
                    && b.is_ascii_lowercase()
                    && element::is_element_symbol(&format!("{a}{b}")) =>
            {
                self.i += 2;
                (format!("{a}{b}"), false)
            }
            (Some(a), Some(b))
                if a.is_ascii_uppercase()
                    && b.is_ascii_lowercase()
                    && !element::is_element_symbol(&a.to_string()) =>
            {
                return Err(Error::at(at, format!("unknown element `{a}{b}`")));
            }
            (Some(a), _) if a.is_ascii_uppercase() => {
                self.i += 1;
                (a.to_string(), false)
            }
            (Some('*'), _) => return Err(Error::at(at, "wildcard atom `*` is not supported")),
            _ => return Err(Error::at(at, "expected an element symbol after `[`")),
        };
        let element = supported(&symbol, at)?;
        if aromatic
            && !matches!(
                symbol.as_str(),
                "B" | "C" | "N" | "O" | "P" | "S" | "Se" | "As" | "Te"
            )
        {
            return Err(Error::at(at, format!("`{symbol}` cannot be aromatic")));
        }
        // Chirality: @, @@, or @TH1, @AL2, @SP3, @TB12, @OH25.
        if self.peek(0) == Some('@') {
            self.i += 1;
            if self.peek(0) == Some('@') {
                self.i += 1;
            } else if self.peek(0).is_some_and(|c| c.is_ascii_uppercase())
                && self.peek(0) != Some('H')
            {
                self.i += 2;
                self.number();
            }
        }
        let mut hydrogens = 0u8;
        if self.peek(0) == Some('H') {
            let h_at = self.pos();
            self.i += 1;
            hydrogens = match self.number() {
                None => 1,
                Some(n) if n <= 9 && self.pos() == h_at + 2 => n as u8,
                Some(n) => {
                    return Err(Error::at(
                        h_at,
                        format!("hydrogen count H{n}: a bracket atom holds at most H9"),
                    ));
                }
            };
        }
        let mut charge: i32 = 0;
        if let Some(sign @ ('+' | '-')) = self.peek(0) {
            let unit = if sign == '+' { 1 } else { -1 };
            self.i += 1;
            charge = unit;
            if let Some(n) = self.number() {
                charge = unit * n.min(99) as i32;
            } else {
                while self.peek(0) == Some(sign) {
                    self.i += 1;
                    charge += unit;
                }
            }
            if charge.abs() > 15 {
                return Err(Error::at(at, "charge beyond ±15"));
            }
        }
        if self.peek(0) == Some(':') {
            self.i += 1;
            if self.number().is_none() {
                return Err(Error::at(self.pos(), "atom class `:` needs a number"));
            }
        }
        if self.peek(0) != Some(']') {
            return Err(match self.peek(0) {
                Some(c) => Error::at(self.pos(), format!("unexpected `{c}` in bracket atom")),
                None => Error::at(open, "unclosed `[`"),
            });
        }
        self.i += 1;
        if isotope == Some(0) {
            return Err(Error::at(open, "isotope 0 is not a mass number"));
        }
        Ok(Atom {
            element,
            isotope,
            charge: charge as i8,
            aromatic,
            bracket: true,
            hydrogens,
            position: open,
        })
    }
}
