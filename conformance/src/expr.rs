//! Parser for the Kaitai Struct expressions that `.kst` files use on their `actual` and
//! `expected` sides.
//!
//! Grammar (lowest precedence first): `c ? a : b`; `or`; `and`; `==` `!=` `<` `<=` `>` `>=`;
//! `|`; `^`; `&`; `<<` `>>`; `+` `-`; `*` `/` `%`; unary `-` `not` `~`; postfix `.name`,
//! `.name(args)`, `.as<type>`, `[index]`. Atoms: integers (`12`, `0x1f`, `0b101`, `0o17`, `_`
//! between digits), floats (`1.5`, `1e-6`), `'text'` (no escapes, as in Kaitai), `"text"`
//! (escapes `\n \t \r \0 \\ \" \' \a \b \e \f \v`, `\xNN`, `\uNNNN`, octal `\NNN`), arrays
//! `[a, b]`, `true`, `false`, `null`, names and enum paths (`schema::enum::value`), `(e)`.

use std::fmt;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// An integer literal.
    Int(i128),
    /// A floating-point literal.
    Float(f64),
    /// A string literal.
    Str(String),
    /// `true` or `false`.
    Bool(bool),
    /// `null`: the member holds nothing.
    Null,
    /// `[a, b, ...]`. Kaitai reads it as a byte array when every element is an integer
    /// literal from 0 to 255, else as a list.
    Array(Vec<Expr>),
    /// A plain name (`foo`, `_root`, `_parent`, `_io`).
    Name(String),
    /// `a::b::c`: an enum value (the last segment), its enum and the types around it.
    Path(Vec<String>),
    /// `e.name`.
    Member(Box<Expr>, String),
    /// `e.name(args)`.
    Call(Box<Expr>, String, Vec<Expr>),
    /// `e.as<type>`, the type as written (`bytes`, `u1`, `schema::sub`).
    Cast(Box<Expr>, String),
    /// `e[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// A unary operator.
    Unary(UnOp, Box<Expr>),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`.
    Neg,
    /// `not x`.
    Not,
    /// `~x`.
    BitNot,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+` (numbers; strings concatenate).
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/` (integers round down).
    Div,
    /// `%` (the result takes the divisor's sign).
    Rem,
    /// `<<`.
    Shl,
    /// `>>`.
    Shr,
    /// `&`.
    BitAnd,
    /// `|`.
    BitOr,
    /// `^`.
    BitXor,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `and`.
    And,
    /// `or`.
    Or,
}

/// An expression that does not parse, with the byte offset in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset in the expression text.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.at, self.message)
    }
}

impl std::error::Error for ParseError {}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Float(f64),
    Str(String),
    Ident(String),
    Punct(&'static str),
}

const PUNCTS: &[&str] = &[
    "::", "==", "!=", "<=", ">=", "<<", ">>", "&&", "||", "(", ")", "[", "]", ",", ".", "?", ":",
    "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "~", "!",
];

fn lex(text: &str) -> Result<Vec<(usize, Tok)>, ParseError> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let err = |at: usize, m: &str| ParseError {
        at,
        message: m.to_owned(),
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' {
            // A YAML-style trailing comment that survived as part of a block scalar.
            break;
        }
        let start = i;
        if c.is_ascii_digit() {
            let (tok, len) = lex_number(&text[i..]).map_err(|m| err(i, &m))?;
            out.push((start, tok));
            i += len;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((start, Tok::Ident(text[start..i].to_owned())));
            continue;
        }
        if c == b'\'' {
            let end = text[i + 1..]
                .find('\'')
                .ok_or_else(|| err(i, "unterminated '...' string"))?;
            out.push((start, Tok::Str(text[i + 1..i + 1 + end].to_owned())));
            i += end + 2;
            continue;
        }
        if c == b'"' {
            let (s, len) = lex_dq_string(&text[i..]).map_err(|m| err(i, &m))?;
            out.push((start, Tok::Str(s)));
            i += len;
            continue;
        }
        match PUNCTS.iter().find(|p| text[i..].starts_with(**p)) {
            Some(p) => {
                out.push((start, Tok::Punct(p)));
                i += p.len();
            }
            None => {
                return Err(err(
                    i,
                    &format!("unexpected character {:?}", text[i..].chars().next()),
                ))
            }
        }
    }
    Ok(out)
}

/// A number at the start of `s`: the token and how many bytes it takes.
fn lex_number(s: &str) -> Result<(Tok, usize), String> {
    let b = s.as_bytes();
    let radix = if b.len() > 1 && b[0] == b'0' {
        match b[1] {
            b'x' | b'X' => Some(16),
            b'b' | b'B' => Some(2),
            b'o' | b'O' => Some(8),
            _ => None,
        }
    } else {
        None
    };
    if let Some(radix) = radix {
        let mut i = 2;
        while i < b.len() && ((b[i] as char).is_digit(radix) || b[i] == b'_') {
            i += 1;
        }
        let digits: String = s[2..i].chars().filter(|c| *c != '_').collect();
        let v = i128::from_str_radix(&digits, radix)
            .map_err(|e| format!("bad number {:?}: {e}", &s[..i]))?;
        return Ok((Tok::Int(v), i));
    }
    let mut i = 0;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut is_float = false;
    // `1.5` is a float; `1.to_s` is a method call on 1.
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        is_float = true;
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            is_float = true;
            i = j;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    let text: String = s[..i].chars().filter(|c| *c != '_').collect();
    if is_float {
        let v: f64 = text
            .parse()
            .map_err(|e| format!("bad number {text:?}: {e}"))?;
        Ok((Tok::Float(v), i))
    } else {
        let v: i128 = text
            .parse()
            .map_err(|e| format!("bad number {text:?}: {e}"))?;
        Ok((Tok::Int(v), i))
    }
}

/// A `"..."` string at the start of `s` (which starts with the quote).
fn lex_dq_string(s: &str) -> Result<(String, usize), String> {
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, i + 1)),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'a' => out.push('\u{7}'),
                    'b' => out.push('\u{8}'),
                    'e' => out.push('\u{1b}'),
                    'f' => out.push('\u{c}'),
                    'v' => out.push('\u{b}'),
                    '\\' | '"' | '\'' => out.push(e),
                    'x' | 'u' => {
                        let n = if e == 'x' { 2 } else { 4 };
                        let mut hex = String::new();
                        for _ in 0..n {
                            match chars.next() {
                                Some((_, h)) if h.is_ascii_hexdigit() => hex.push(h),
                                _ => return Err(format!("bad \\{e} escape")),
                            }
                        }
                        let v = u32::from_str_radix(&hex, 16).map_err(|e| e.to_string())?;
                        out.push(char::from_u32(v).ok_or("escape is not a character")?);
                    }
                    '0'..='7' => {
                        let mut v = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match chars.peek() {
                                Some((_, d)) if d.is_digit(8) => {
                                    v = v * 8 + d.to_digit(8).unwrap_or(0);
                                    chars.next();
                                }
                                _ => break,
                            }
                        }
                        out.push(char::from_u32(v).ok_or("escape is not a character")?);
                    }
                    other => return Err(format!("unknown escape \\{other}")),
                }
            }
            c => out.push(c),
        }
    }
    Err("unterminated \"...\" string".to_owned())
}

/// Parses one expression; the whole text must be used.
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    let toks = lex(text)?;
    let mut p = Parser {
        toks,
        i: 0,
        end: text.len(),
    };
    let e = p.ternary()?;
    if p.i < p.toks.len() {
        return Err(p.err("unexpected text after the expression"));
    }
    Ok(e)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    i: usize,
    end: usize,
}

impl Parser {
    fn err(&self, m: &str) -> ParseError {
        let at = self.toks.get(self.i).map(|t| t.0).unwrap_or(self.end);
        ParseError {
            at,
            message: m.to_owned(),
        }
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.1)
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(q)) if q == w)
    }
    fn eat(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, p: &str) -> Result<(), ParseError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(&format!("expected `{p}`")))
        }
    }

    fn ternary(&mut self) -> Result<Expr, ParseError> {
        let c = self.or()?;
        if self.eat("?") {
            let a = self.ternary()?;
            self.expect(":")?;
            let b = self.ternary()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }
    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.and()?;
        while self.is_word("or") || self.is_punct("||") {
            self.i += 1;
            let r = self.and()?;
            l = Expr::Binary(BinOp::Or, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.cmp()?;
        while self.is_word("and") || self.is_punct("&&") {
            self.i += 1;
            let r = self.cmp()?;
            l = Expr::Binary(BinOp::And, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn cmp(&mut self) -> Result<Expr, ParseError> {
        let l = self.bin_level(0)?;
        let op = match self.peek() {
            Some(Tok::Punct("==")) => BinOp::Eq,
            Some(Tok::Punct("!=")) => BinOp::Ne,
            Some(Tok::Punct("<")) => BinOp::Lt,
            Some(Tok::Punct("<=")) => BinOp::Le,
            Some(Tok::Punct(">")) => BinOp::Gt,
            Some(Tok::Punct(">=")) => BinOp::Ge,
            _ => return Ok(l),
        };
        self.i += 1;
        let r = self.bin_level(0)?;
        Ok(Expr::Binary(op, Box::new(l), Box::new(r)))
    }
    /// Levels: 0 `|`, 1 `^`, 2 `&`, 3 shifts, 4 additive, 5 multiplicative.
    fn bin_level(&mut self, level: usize) -> Result<Expr, ParseError> {
        if level > 5 {
            return self.unary();
        }
        let mut l = self.bin_level(level + 1)?;
        loop {
            let op = match (level, self.peek()) {
                (0, Some(Tok::Punct("|"))) => BinOp::BitOr,
                (1, Some(Tok::Punct("^"))) => BinOp::BitXor,
                (2, Some(Tok::Punct("&"))) => BinOp::BitAnd,
                (3, Some(Tok::Punct("<<"))) => BinOp::Shl,
                (3, Some(Tok::Punct(">>"))) => BinOp::Shr,
                (4, Some(Tok::Punct("+"))) => BinOp::Add,
                (4, Some(Tok::Punct("-"))) => BinOp::Sub,
                (5, Some(Tok::Punct("*"))) => BinOp::Mul,
                (5, Some(Tok::Punct("/"))) => BinOp::Div,
                (5, Some(Tok::Punct("%"))) => BinOp::Rem,
                _ => return Ok(l),
            };
            self.i += 1;
            let r = self.bin_level(level + 1)?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }
    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat("-") {
            // Fold `-<literal>` so that `-9223372036854775808` and `-0.0` stay literals.
            return Ok(match self.unary()? {
                Expr::Int(v) => Expr::Int(-v),
                Expr::Float(v) => Expr::Float(-v),
                e => Expr::Unary(UnOp::Neg, Box::new(e)),
            });
        }
        if self.eat("~") {
            return Ok(Expr::Unary(UnOp::BitNot, Box::new(self.unary()?)));
        }
        if self.is_word("not") || self.is_punct("!") {
            self.i += 1;
            return Ok(Expr::Unary(UnOp::Not, Box::new(self.unary()?)));
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.atom()?;
        loop {
            if self.eat("[") {
                let i = self.ternary()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(i));
            } else if self.eat(".") {
                let name = match self.peek() {
                    Some(Tok::Ident(n)) => n.clone(),
                    _ => return Err(self.err("expected a name after `.`")),
                };
                self.i += 1;
                if name == "as" && self.is_punct("<") {
                    self.i += 1;
                    let ty = self.type_name()?;
                    self.expect(">")?;
                    e = Expr::Cast(Box::new(e), ty);
                } else if self.eat("(") {
                    let args = self.list(")")?;
                    e = Expr::Call(Box::new(e), name, args);
                } else {
                    e = Expr::Member(Box::new(e), name);
                }
            } else {
                return Ok(e);
            }
        }
    }
    fn type_name(&mut self) -> Result<String, ParseError> {
        let mut s = String::new();
        loop {
            match self.peek() {
                Some(Tok::Ident(n)) => s.push_str(n),
                _ => return Err(self.err("expected a type name")),
            }
            self.i += 1;
            if self.eat("::") {
                s.push_str("::");
            } else if self.eat("[") {
                self.expect("]")?;
                s.push_str("[]");
                return Ok(s);
            } else {
                return Ok(s);
            }
        }
    }
    fn list(&mut self, close: &str) -> Result<Vec<Expr>, ParseError> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        loop {
            items.push(self.ternary()?);
            if self.eat(close) {
                return Ok(items);
            }
            self.expect(",")?;
            if self.eat(close) {
                return Ok(items);
            }
        }
    }
    fn atom(&mut self) -> Result<Expr, ParseError> {
        let Some(tok) = self.peek().cloned() else {
            return Err(self.err("expected an expression"));
        };
        self.i += 1;
        match tok {
            Tok::Int(v) => Ok(Expr::Int(v)),
            Tok::Float(v) => Ok(Expr::Float(v)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Punct("(") => {
                let e = self.ternary()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => Ok(Expr::Array(self.list("]")?)),
            Tok::Ident(n) => {
                if self.is_punct("::") {
                    let mut path = vec![n];
                    while self.eat("::") {
                        match self.peek() {
                            Some(Tok::Ident(s)) => path.push(s.clone()),
                            _ => return Err(self.err("expected a name after `::`")),
                        }
                        self.i += 1;
                    }
                    return Ok(Expr::Path(path));
                }
                Ok(match n.as_str() {
                    "true" => Expr::Bool(true),
                    "false" => Expr::Bool(false),
                    "null" => Expr::Null,
                    _ => Expr::Name(n),
                })
            }
            Tok::Punct(p) => {
                self.i -= 1;
                Err(self.err(&format!("unexpected `{p}`")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Expr {
        parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn numbers_in_every_radix_with_separators() {
        assert_eq!(p("0x2D_55_2D_4B"), Expr::Int(0x2D55_2D4B));
        assert_eq!(
            p("0b0000_0000_0001_0010_0011_0100_0101_011"),
            Expr::Int(0x91a2b)
        );
        assert_eq!(p("0o721"), Expr::Int(0o721));
        assert_eq!(p("-0x4150ffff312d4b43"), Expr::Int(-0x4150ffff312d4b43));
        assert_eq!(p("18446744073709551615"), Expr::Int(18446744073709551615));
        assert_eq!(
            p("-8.754689149998834e+288"),
            Expr::Float(-8.754689149998834e+288)
        );
        assert_eq!(p("1.0"), Expr::Float(1.0));
        assert_eq!(p("0x14  # 0x8a ^ 0x9e"), Expr::Int(0x14));
    }

    #[test]
    fn strings_keep_kaitai_quoting_rules() {
        assert_eq!(p(r#""abc\n\tt""#), Expr::Str("abc\n\tt".into()));
        assert_eq!(p(r#""cȀd\u0000""#), Expr::Str("cȀd\0".into()));
        assert_eq!(p(r"'a\nb'"), Expr::Str("a\\nb".into()));
        assert_eq!(p(r#""\x41\101""#), Expr::Str("AA".into()));
    }

    #[test]
    fn precedence_postfix_and_paths() {
        assert_eq!(
            p("1 + 4 * 2"),
            Expr::Binary(
                BinOp::Add,
                Box::new(Expr::Int(1)),
                Box::new(Expr::Binary(
                    BinOp::Mul,
                    Box::new(Expr::Int(4)),
                    Box::new(Expr::Int(2))
                ))
            )
        );
        assert_eq!(
            p("chunks[0].body.as<switch_manual_int_size::chunk::chunk_meta>.title"),
            Expr::Member(
                Box::new(Expr::Cast(
                    Box::new(Expr::Member(
                        Box::new(Expr::Index(
                            Box::new(Expr::Name("chunks".into())),
                            Box::new(Expr::Int(0))
                        )),
                        "body".into()
                    )),
                    "switch_manual_int_size::chunk::chunk_meta".into()
                )),
                "title".into()
            )
        );
        assert_eq!(
            p("enum_0::animal::cat"),
            Expr::Path(vec!["enum_0".into(), "animal".into(), "cat".into()])
        );
        assert_eq!(
            p("[].as<bytes>"),
            Expr::Cast(Box::new(Expr::Array(vec![])), "bytes".into())
        );
        assert_eq!(
            p("0.5.as<f4>"),
            Expr::Cast(Box::new(Expr::Float(0.5)), "f4".into())
        );
        assert_eq!(
            p("a.to_i(16)"),
            Expr::Call(
                Box::new(Expr::Name("a".into())),
                "to_i".into(),
                vec![Expr::Int(16)]
            )
        );
        assert_eq!(
            p("x < 3 ? 'a' : 'b'"),
            Expr::Cond(
                Box::new(Expr::Binary(
                    BinOp::Lt,
                    Box::new(Expr::Name("x".into())),
                    Box::new(Expr::Int(3))
                )),
                Box::new(Expr::Str("a".into())),
                Box::new(Expr::Str("b".into()))
            )
        );
        assert_eq!(
            p("not true"),
            Expr::Unary(UnOp::Not, Box::new(Expr::Bool(true)))
        );
    }

    #[test]
    fn multi_line_arrays_and_errors() {
        assert_eq!(
            p("[\n  0x0a, 0x00,\n  0x53,\n]\n"),
            Expr::Array(vec![Expr::Int(10), Expr::Int(0), Expr::Int(0x53)])
        );
        assert!(parse("a +").is_err());
        assert!(parse("a b").is_err());
        assert!(parse("'open").is_err());
        assert!(parse("0xzz").is_err());
    }
}
