//! Reading a SMARTS pattern (the subset described in the parent module) into a
//! [`Pattern`]: for code generation (the compiled-in typing table) and tests.

use super::{BondExpr, Expr, MAX_PATTERN_ATOMS, Pattern, Prim};
use crate::element;

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .parse()
            .ok()
    }
    fn err(&self, what: &str) -> String {
        format!(
            "{what} at {} in `{}`",
            self.i + 1,
            String::from_utf8_lossy(self.s)
        )
    }

    fn element(&mut self, aromatic_allowed: bool) -> Option<Prim> {
        let c = self.peek()?;
        if c.is_ascii_uppercase() {
            let two = self
                .s
                .get(self.i + 1)
                .filter(|n| n.is_ascii_lowercase())
                .map(|n| format!("{}{}", c as char, *n as char));
            if let Some(sym) = two.filter(|s| element::is_element_symbol(s)) {
                self.i += 2;
                return Some(Prim::Element {
                    number: number_of(&sym)?,
                    aromatic: Some(false),
                });
            }
            if c == b'H' || c == b'X' || c == b'D' || c == b'A' {
                return None;
            }
            self.i += 1;
            return Some(Prim::Element {
                number: number_of(&(c as char).to_string())?,
                aromatic: Some(false),
            });
        }
        if aromatic_allowed && b"cnops".contains(&c) {
            self.i += 1;
            let sym = (c as char).to_ascii_uppercase().to_string();
            return Some(Prim::Element {
                number: number_of(&sym)?,
                aromatic: Some(true),
            });
        }
        None
    }

    fn primitive(&mut self) -> Result<Expr, String> {
        let c = self
            .peek()
            .ok_or_else(|| self.err("expression ends early"))?;
        let prim = match c {
            b'!' => {
                self.i += 1;
                return Ok(Expr::Not(Box::leak(Box::new(self.primitive()?))));
            }
            b'#' => {
                self.i += 1;
                let n = self
                    .number()
                    .ok_or_else(|| self.err("`#` needs a number"))?;
                Prim::Element {
                    number: n as u8,
                    aromatic: None,
                }
            }
            b'A' => {
                self.i += 1;
                Prim::Aliphatic
            }
            b'a' => {
                self.i += 1;
                Prim::Aromatic
            }
            b'*' => {
                self.i += 1;
                Prim::Any
            }
            b'H' | b'X' | b'D' => {
                self.i += 1;
                let n = self.number().unwrap_or(1);
                match c {
                    b'H' => Prim::Hydrogens(n),
                    b'X' => Prim::Connections(n),
                    _ => Prim::Degree(n),
                }
            }
            b'+' | b'-' => {
                self.i += 1;
                let unit: i32 = if c == b'+' { 1 } else { -1 };
                let mut charge = unit;
                if let Some(n) = self.number() {
                    charge = unit * n as i32;
                } else {
                    while self.peek() == Some(c) {
                        self.i += 1;
                        charge += unit;
                    }
                }
                Prim::Charge(charge as i8)
            }
            _ => self
                .element(true)
                .ok_or_else(|| self.err("unknown atom primitive"))?,
        };
        Ok(Expr::Prim(prim))
    }

    /// `;`-separated, of `,`-separated, of `&`/juxtaposed primitives.
    fn expression(&mut self) -> Result<Expr, String> {
        let mut lows = vec![self.or_expr()?];
        while self.peek() == Some(b';') {
            self.i += 1;
            lows.push(self.or_expr()?);
        }
        Ok(if lows.len() == 1 {
            lows.pop().unwrap()
        } else {
            Expr::And(lows.leak())
        })
    }

    fn or_expr(&mut self) -> Result<Expr, String> {
        let mut alts = vec![self.and_expr()?];
        while self.peek() == Some(b',') {
            self.i += 1;
            alts.push(self.and_expr()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap()
        } else {
            Expr::Or(alts.leak())
        })
    }

    fn and_expr(&mut self) -> Result<Expr, String> {
        let mut all = vec![self.primitive()?];
        loop {
            match self.peek() {
                Some(b'&') => {
                    self.i += 1;
                    all.push(self.primitive()?);
                }
                Some(b';' | b',' | b']') | None => break,
                Some(_) => all.push(self.primitive()?),
            }
        }
        Ok(if all.len() == 1 {
            all.pop().unwrap()
        } else {
            Expr::And(all.leak())
        })
    }

    fn atom(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some(b'[') => {
                self.i += 1;
                let e = self.expression()?;
                if self.peek() != Some(b']') {
                    return Err(self.err("expected `]`"));
                }
                self.i += 1;
                Ok(e)
            }
            Some(b'a') => {
                self.i += 1;
                Ok(Expr::Prim(Prim::Aromatic))
            }
            Some(b'A') => {
                self.i += 1;
                Ok(Expr::Prim(Prim::Aliphatic))
            }
            Some(b'*') => {
                self.i += 1;
                Ok(Expr::Prim(Prim::Any))
            }
            _ => self
                .element(true)
                .map(Expr::Prim)
                .ok_or_else(|| self.err("expected an atom")),
        }
    }

    fn bond(&mut self) -> BondExpr {
        let b = match self.peek() {
            Some(b'-') => BondExpr::Single,
            Some(b'=') => BondExpr::Double,
            Some(b'#') => BondExpr::Triple,
            Some(b':') => BondExpr::Aromatic,
            Some(b'~') => BondExpr::Any,
            _ => return BondExpr::SingleOrAromatic,
        };
        self.i += 1;
        b
    }
}

fn number_of(symbol: &str) -> Option<u8> {
    element::by_symbol(symbol).map(|e| e.number)
}

impl Pattern {
    /// Parses a pattern. The result is leaked to become `'static`: parsing is for code
    /// generation and tests, and compiled-in tables need no parsing at all.
    pub fn parse(smarts: &str) -> Result<Self, String> {
        let mut r = Reader {
            s: smarts.as_bytes(),
            i: 0,
        };
        let mut atoms = vec![r.atom()?];
        let mut parents = vec![(usize::MAX, BondExpr::Any)];
        let mut current = 0;
        let mut stack = Vec::new();
        while let Some(c) = r.peek() {
            match c {
                b'(' => {
                    r.i += 1;
                    stack.push(current);
                }
                b')' => {
                    r.i += 1;
                    current = stack.pop().ok_or_else(|| r.err("unmatched `)`"))?;
                }
                _ => {
                    let bond = r.bond();
                    atoms.push(r.atom()?);
                    parents.push((current, bond));
                    current = atoms.len() - 1;
                }
            }
        }
        if atoms.len() > MAX_PATTERN_ATOMS {
            return Err(format!("more than {MAX_PATTERN_ATOMS} atoms in `{smarts}`"));
        }
        Ok(Self {
            atoms: atoms.leak(),
            parents: parents.leak(),
        })
    }
}
