//! The Kaitai Struct expression grammar, for the subset statepack schemas use.
//!
//! Literals: integers (`42`, `0x2a`, `0b101`, `0o52`, `1_000`), floats (`0.5`, `1e-6`),
//! strings (`"a"`, `'a'`), f-strings (`f"n={n}"`), `true`/`false`, `null`. Names: earlier
//! fields of the same type, `_` (the current element in `repeat-until` and `valid: expr`),
//! enum values `enum_name::value`. Operators, by
//! increasing precedence: `? :`, `or`, `and`, `not`, comparisons (`== != < <= > >=`), `|`,
//! `^`, `&`, `<< >>`, `+ -`, `* / %`, unary `-` and `~`, then attributes (`.to_i`, `.length`,
//! `.size`) and parentheses.

use std::fmt;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Integer literal.
    Int(i128),
    /// Float literal.
    Float(f64),
    /// String literal.
    Str(String),
    /// `true` / `false`.
    Bool(bool),
    /// `null`: no value (the conformance runner's `expected: 'null'`; schemas cannot use it).
    Null,
    /// A field name or `_`.
    Name(String),
    /// `enum_name::value`; the enum may be a path through types (`outer::animal`).
    EnumRef(String, String),
    /// Unary operator applied to an operand.
    Unary(UnOp, Box<Expr>),
    /// Binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `cond ? a : b`.
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `expr.attribute`.
    Attr(Box<Expr>, String),
    /// `expr.method(arg, ...)`: `.substring(from, to)`, `.to_i(radix)`, `.to_s(encoding)`.
    Call(Box<Expr>, String, Vec<Expr>),
    /// `expr[index]` on a list or a byte array.
    Index(Box<Expr>, Box<Expr>),
    /// `[a, b, ...]`: a byte array when every element is an integer literal 0..=255, else a
    /// list.
    List(Vec<Expr>),
    /// `expr.as<type>`: the type may be a path (`outer::inner`), `bytes`, `str` or a number type.
    Cast(Box<Expr>, String),
    /// `sizeof<type>`: the fixed encoded size of a type, in bytes.
    SizeOf(String),
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
    /// `~x`
    BitNot,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `or`
    Or,
    /// `and`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&`
    BitAnd,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
}

impl BinOp {
    fn power(self) -> u8 {
        match self {
            BinOp::Or => 2,
            BinOp::And => 3,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 5,
            BinOp::BitOr => 6,
            BinOp::BitXor => 7,
            BinOp::BitAnd => 8,
            BinOp::Shl | BinOp::Shr => 9,
            BinOp::Add | BinOp::Sub => 10,
            BinOp::Mul | BinOp::Div | BinOp::Mod => 11,
        }
    }

    /// True for `== != < <= > >=`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Float(f64),
    Str(String),
    Ident(String),
    Op(&'static str),
    /// An f-string `f"a{x}b"`: literal text and the source of each `{...}` part.
    FStr(Vec<FPart>),
}

/// One piece of an f-string.
#[derive(Debug, Clone, PartialEq)]
enum FPart {
    /// Literal text (escapes already applied).
    Text(String),
    /// The source of an interpolated expression.
    Code(String),
}

/// Lexes the body of an f-string (after `f"`) through its closing `"`: literal runs (with the
/// escapes of `"..."` strings) and `{expr}` parts. Returns the parts and the characters used.
fn lex_fstring(chars: &[char]) -> Result<(Vec<FPart>, usize), String> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    let flush = |text: &mut String, parts: &mut Vec<FPart>| -> Result<(), String> {
        if !text.is_empty() {
            match lex(&format!("\"{text}\""))?.as_slice() {
                [Tok::Str(s)] => parts.push(FPart::Text(s.clone())),
                _ => return Err("bad text in an f-string".into()),
            }
            text.clear();
        }
        Ok(())
    };
    loop {
        match chars.get(i) {
            None => return Err("unterminated f-string".into()),
            Some('"') => {
                flush(&mut text, &mut parts)?;
                return Ok((parts, i + 1));
            }
            Some('\\') => {
                text.push('\\');
                match chars.get(i + 1) {
                    Some(&n) => text.push(n),
                    None => return Err("unterminated f-string".into()),
                }
                i += 2;
            }
            Some('{') => {
                flush(&mut text, &mut parts)?;
                let mut depth = 1;
                let mut quote: Option<char> = None;
                let start = i + 1;
                i += 1;
                loop {
                    let Some(&ch) = chars.get(i) else {
                        return Err("unterminated `{` in an f-string".into());
                    };
                    match (quote, ch) {
                        (Some(q), c) if c == q => quote = None,
                        (Some('"'), '\\') => i += 1,
                        (Some(_), _) => {}
                        (None, '"' | '\'') => quote = Some(ch),
                        (None, '{') => depth += 1,
                        (None, '}') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                parts.push(FPart::Code(chars[start..i].iter().collect()));
                i += 1;
            }
            Some('}') => return Err("`}` in an f-string must follow a `{`".into()),
            Some(&c) => {
                text.push(c);
                i += 1;
            }
        }
    }
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Int(v) => write!(f, "{v}"),
            Tok::Float(v) => write!(f, "{v}"),
            Tok::Str(s) => write!(f, "{s:?}"),
            Tok::Ident(s) => write!(f, "{s}"),
            Tok::Op(s) => write!(f, "{s}"),
            Tok::FStr(_) => write!(f, "f-string"),
        }
    }
}

const OPS: [&str; 26] = [
    "::", "==", "!=", "<=", ">=", "<<", ">>", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^",
    "~", "(", ")", "?", ":", ".", "[", "]", ",",
];

fn parse_int(text: &str) -> Option<i128> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let (digits, radix) = if let Some(r) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (r, 16)
    } else if let Some(r) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (r, 2)
    } else if let Some(r) = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")) {
        (r, 8)
    } else {
        (t.as_str(), 10)
    };
    if digits.is_empty() {
        return None;
    }
    i128::from_str_radix(digits, radix).ok()
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            let radix =
                c == '0' && matches!(chars.get(i + 1), Some('x' | 'X' | 'b' | 'B' | 'o' | 'O'));
            let mut is_float = false;
            if radix {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            } else {
                let digits = |i: &mut usize| {
                    while *i < chars.len() && (chars[*i].is_ascii_digit() || chars[*i] == '_') {
                        *i += 1;
                    }
                };
                digits(&mut i);
                if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                    is_float = true;
                    i += 1;
                    digits(&mut i);
                } else if chars.get(i) == Some(&'.')
                    && !chars
                        .get(i + 1)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == '_' || *c == '.')
                {
                    // A float written with a trailing dot (`24000.`), as Kaitai Struct
                    // accepts; `1.to_s` stays a method call on an integer.
                    is_float = true;
                    i += 1;
                }
                // An exponent: `1e6`, `2.5E-3`.
                if matches!(chars.get(i), Some('e' | 'E')) {
                    let sign = usize::from(matches!(chars.get(i + 1), Some('+' | '-')));
                    if chars.get(i + 1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                        is_float = true;
                        i += 1 + sign;
                        digits(&mut i);
                    }
                }
                // Letters right after a number make it a bad one (`12ab`), reported below.
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                    is_float = false;
                }
            }
            let text: String = chars[start..i].iter().collect();
            if is_float {
                let t: String = text.chars().filter(|c| *c != '_').collect();
                match t.parse::<f64>() {
                    Ok(v) if v.is_finite() => out.push(Tok::Float(v)),
                    _ => return Err(format!("`{text}` is not a finite number")),
                }
            } else {
                out.push(Tok::Int(
                    parse_int(&text).ok_or_else(|| format!("`{text}` is not an integer"))?,
                ));
            }
            continue;
        }
        if c == 'f' && chars.get(i + 1) == Some(&'"') {
            let (parts, used) = lex_fstring(&chars[i + 2..])?;
            out.push(Tok::FStr(parts));
            i += 2 + used;
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
            continue;
        }
        if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err("unterminated string literal".into()),
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some('\\') if c == '"' => {
                        // Kaitai Struct's escapes: C-like letters, octal `\ooo`, `\uXXXX`.
                        let mut used = 2;
                        match chars.get(i + 1) {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some('r') => s.push('\r'),
                            Some('a') => s.push('\u{7}'),
                            Some('b') => s.push('\u{8}'),
                            Some('v') => s.push('\u{b}'),
                            Some('f') => s.push('\u{c}'),
                            Some('e') => s.push('\u{1b}'),
                            Some('u') => {
                                let hex: String = chars.iter().skip(i + 2).take(4).collect();
                                let ch = (hex.len() == 4)
                                    .then(|| u32::from_str_radix(&hex, 16).ok())
                                    .flatten()
                                    .and_then(char::from_u32)
                                    .ok_or_else(|| {
                                        format!("`\\u{hex}` is not a \\u escape of four hex digits")
                                    })?;
                                s.push(ch);
                                used = 6;
                            }
                            Some(d) if d.is_digit(8) => {
                                let oct: String = chars
                                    .iter()
                                    .skip(i + 1)
                                    .take(3)
                                    .take_while(|c| c.is_digit(8))
                                    .collect();
                                let v = u32::from_str_radix(&oct, 8).unwrap_or(0);
                                s.push(char::from_u32(v).unwrap_or('\0'));
                                used = 1 + oct.len();
                            }
                            Some(&o) => s.push(o),
                            None => return Err("unterminated string literal".into()),
                        }
                        i += used;
                    }
                    Some(&o) => {
                        s.push(o);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Str(s));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match OPS.iter().find(|op| rest.starts_with(**op)) {
            Some(op) => {
                out.push(Tok::Op(op));
                i += op.len();
            }
            None => return Err(format!("unexpected character `{c}`")),
        }
    }
    Ok(out)
}

struct P {
    toks: Vec<Tok>,
    i: usize,
    depth: usize,
    /// How many f-strings enclose this expression.
    fnest: usize,
}

/// The most f-strings that may nest inside one another's `{...}`.
const MAX_FSTRING_NESTING: usize = 4;

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.i).cloned();
        self.i += 1;
        t
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(o)) if o == w) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn binop(&self) -> Option<BinOp> {
        Some(match self.peek()? {
            Tok::Ident(w) if w == "or" => BinOp::Or,
            Tok::Ident(w) if w == "and" => BinOp::And,
            Tok::Op("==") => BinOp::Eq,
            Tok::Op("!=") => BinOp::Ne,
            Tok::Op("<") => BinOp::Lt,
            Tok::Op("<=") => BinOp::Le,
            Tok::Op(">") => BinOp::Gt,
            Tok::Op(">=") => BinOp::Ge,
            Tok::Op("|") => BinOp::BitOr,
            Tok::Op("^") => BinOp::BitXor,
            Tok::Op("&") => BinOp::BitAnd,
            Tok::Op("<<") => BinOp::Shl,
            Tok::Op(">>") => BinOp::Shr,
            Tok::Op("+") => BinOp::Add,
            Tok::Op("-") => BinOp::Sub,
            Tok::Op("*") => BinOp::Mul,
            Tok::Op("/") => BinOp::Div,
            Tok::Op("%") => BinOp::Mod,
            _ => return None,
        })
    }

    fn ternary(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > 64 {
            return Err("expression nests too deeply".into());
        }
        let cond = self.binary(0)?;
        let out = if self.eat_op("?") {
            let a = self.ternary()?;
            if !self.eat_op(":") {
                return Err("expected `:` in a `? :` expression".into());
            }
            let b = self.ternary()?;
            Expr::Ternary(Box::new(cond), Box::new(a), Box::new(b))
        } else {
            cond
        };
        self.depth -= 1;
        Ok(out)
    }

    fn binary(&mut self, min: u8) -> Result<Expr, String> {
        let mut lhs = if self.eat_word("not") {
            Expr::Unary(UnOp::Not, Box::new(self.binary(4)?))
        } else {
            self.unary()?
        };
        // Whether `lhs` is a comparison made in this loop: `a < b < c` is refused, while a
        // parenthesised comparison (`(a < b) == (c < d)`) came whole from `unary`.
        let mut lhs_compares = false;
        while let Some(op) = self.binop() {
            let p = op.power();
            if p <= min {
                break;
            }
            self.i += 1;
            let rhs = self.binary(p)?;
            if op.is_comparison() && lhs_compares {
                return Err("comparisons cannot be chained; use `and`".into());
            }
            lhs_compares = op.is_comparison();
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        // Unary plus: the operand itself (`+5`, `+x`).
        if self.eat_op("+") {
            return self.unary();
        }
        if self.eat_op("-") {
            return Ok(match self.unary()? {
                Expr::Int(v) => Expr::Int(-v),
                Expr::Float(v) => Expr::Float(-v),
                e => Expr::Unary(UnOp::Neg, Box::new(e)),
            });
        }
        if self.eat_op("~") {
            return Ok(Expr::Unary(UnOp::BitNot, Box::new(self.unary()?)));
        }
        let mut e = self.primary()?;
        loop {
            if self.eat_op("[") {
                let i = self.ternary()?;
                if !self.eat_op("]") {
                    return Err("expected `]` after the index".into());
                }
                e = Expr::Index(Box::new(e), Box::new(i));
                continue;
            }
            if !self.eat_op(".") {
                break;
            }
            match self.next() {
                Some(Tok::Ident(a)) if a == "as" && self.eat_op("<") => {
                    let t = self.type_name()?;
                    e = Expr::Cast(Box::new(e), t);
                }
                Some(Tok::Ident(a)) if self.eat_op("(") => {
                    let args = self.items(")")?;
                    e = Expr::Call(Box::new(e), a, args);
                }
                Some(Tok::Ident(a)) => e = Expr::Attr(Box::new(e), a),
                other => {
                    return Err(format!(
                        "expected an attribute name after `.`, found {}",
                        other.map(|t| format!("`{t}`")).unwrap_or("the end".into())
                    ))
                }
            }
        }
        Ok(e)
    }

    /// A type name after `<` (as in `.as<outer::inner>` and `sizeof<block>`), through `>`.
    fn type_name(&mut self) -> Result<String, String> {
        let mut path = Vec::new();
        loop {
            match self.next() {
                Some(Tok::Ident(v)) => path.push(v),
                _ => return Err("expected a type name after `<`".into()),
            }
            if !self.eat_op("::") {
                break;
            }
        }
        // `u2[]`, `block[]`: a list of that type (as in `params`).
        let mut list = false;
        if self.eat_op("[") {
            if !self.eat_op("]") {
                return Err("expected `]` after `[` in a list type (`u2[]`)".into());
            }
            list = true;
        }
        if !self.eat_op(">") {
            return Err("expected `>` after the type name".into());
        }
        let name = path.join("::");
        Ok(if list { format!("{name}[]") } else { name })
    }

    /// Comma-separated expressions through the closing `close` (which may come first).
    fn items(&mut self, close: &str) -> Result<Vec<Expr>, String> {
        let mut out = Vec::new();
        if self.eat_op(close) {
            return Ok(out);
        }
        loop {
            out.push(self.ternary()?);
            if self.eat_op(close) {
                return Ok(out);
            }
            if !self.eat_op(",") {
                return Err(format!("expected `,` or `{close}`"));
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Tok::Int(v)) => Ok(Expr::Int(v)),
            Some(Tok::Float(v)) => Ok(Expr::Float(v)),
            Some(Tok::Str(s)) => Ok(Expr::Str(s)),
            Some(Tok::FStr(parts)) => {
                // `f"a{x}b"` is `"a" + x.to_s + "b"`.
                let mut out: Option<Expr> = None;
                for p in parts {
                    let e = match p {
                        FPart::Text(t) => Expr::Str(t),
                        FPart::Code(c) => {
                            if self.fnest >= MAX_FSTRING_NESTING {
                                return Err("f-strings nest too deeply".into());
                            }
                            let inner = parse_nested(&c, self.fnest + 1)
                                .map_err(|m| format!("in `{{{c}}}`: {m}"))?;
                            Expr::Attr(Box::new(inner), "to_s".into())
                        }
                    };
                    out = Some(match out {
                        None => e,
                        Some(a) => Expr::Binary(BinOp::Add, Box::new(a), Box::new(e)),
                    });
                }
                Ok(out.unwrap_or(Expr::Str(String::new())))
            }
            Some(Tok::Ident(w)) if w == "true" => Ok(Expr::Bool(true)),
            Some(Tok::Ident(w)) if w == "false" => Ok(Expr::Bool(false)),
            Some(Tok::Ident(w)) if w == "null" => Ok(Expr::Null),
            Some(Tok::Ident(w)) if w == "sizeof" && self.eat_op("<") => {
                Ok(Expr::SizeOf(self.type_name()?))
            }
            Some(Tok::Ident(w)) => {
                if self.eat_op("::") {
                    // `enum::value`, or a path through types: `outer::inner::enum::value`.
                    let mut path = vec![w];
                    loop {
                        match self.next() {
                            Some(Tok::Ident(v)) => path.push(v),
                            _ => {
                                return Err(format!(
                                    "expected a name after `{}::`",
                                    path.join("::")
                                ))
                            }
                        }
                        if !self.eat_op("::") {
                            break;
                        }
                    }
                    let value = path.pop().unwrap_or_default();
                    Ok(Expr::EnumRef(path.join("::"), value))
                } else {
                    Ok(Expr::Name(w))
                }
            }
            Some(Tok::Op("[")) => Ok(Expr::List(self.items("]")?)),
            Some(Tok::Op("(")) => {
                let e = self.ternary()?;
                if !self.eat_op(")") {
                    return Err("expected `)`".into());
                }
                Ok(e)
            }
            Some(t) => Err(format!("unexpected `{t}`")),
            None => Err("the expression ends early".into()),
        }
    }
}

/// The most tokens one expression may have.
const MAX_TOKENS: usize = 1024;
/// The deepest an expression tree may nest.
const MAX_DEPTH: usize = 64;

/// Parses a KS expression. Errors describe the first problem in plain words.
pub fn parse(src: &str) -> Result<Expr, String> {
    parse_nested(src, 0)
}

/// [`parse`] for an expression inside `fnest` f-strings.
fn parse_nested(src: &str, fnest: usize) -> Result<Expr, String> {
    let toks = lex(src)?;
    if toks.is_empty() {
        return Err("the expression is empty".into());
    }
    // Parsing, checking and emitting recurse over the tree: the token count bounds the
    // parser (a prefix chain like `-~-~x` recurses once per operator) and the depth check
    // below bounds everything after it (`a + b + c ...` nests one level per operator).
    if toks.len() > MAX_TOKENS {
        return Err(format!(
            "the expression is too long ({} tokens; at most {MAX_TOKENS})",
            toks.len()
        ));
    }
    let mut p = P {
        toks,
        i: 0,
        depth: 0,
        fnest,
    };
    let e = p.ternary()?;
    if let Some(t) = p.peek() {
        return Err(format!("unexpected `{t}` after the end of the expression"));
    }
    if depth(&e) > MAX_DEPTH {
        return Err(format!(
            "expression nests too deeply (more than {MAX_DEPTH} levels of operators)"
        ));
    }
    Ok(e)
}

/// The depth of an expression tree, counted without recursion.
fn depth(e: &Expr) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(e, 1usize)];
    while let Some((e, d)) = todo.pop() {
        deepest = deepest.max(d);
        match e {
            Expr::Unary(_, a) | Expr::Attr(a, _) | Expr::Cast(a, _) => todo.push((a, d + 1)),
            Expr::Index(a, b) => todo.extend([(&**a, d + 1), (&**b, d + 1)]),
            Expr::Call(a, _, args) => {
                todo.push((a, d + 1));
                todo.extend(args.iter().map(|x| (x, d + 1)));
            }
            Expr::List(items) => todo.extend(items.iter().map(|x| (x, d + 1))),
            Expr::Binary(_, a, b) => todo.extend([(&**a, d + 1), (&**b, d + 1)]),
            Expr::Ternary(c, a, b) => todo.extend([(&**c, d + 1), (&**a, d + 1), (&**b, d + 1)]),
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Str(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::Name(_)
            | Expr::SizeOf(_)
            | Expr::EnumRef(_, _) => {}
        }
    }
    deepest
}

/// Parses an integer literal in KS syntax (decimal, `0x`, `0b`, `0o`, underscores allowed).
pub fn parse_int_literal(text: &str) -> Option<i128> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix('-') {
        return parse_int(rest).map(|v| -v);
    }
    parse_int(t)
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Int(v) => write!(f, "{v}"),
            Expr::Float(v) => write!(f, "{v}"),
            Expr::Str(s) => write!(f, "{s:?}"),
            Expr::Bool(b) => write!(f, "{b}"),
            Expr::Null => write!(f, "null"),
            Expr::Name(n) => write!(f, "{n}"),
            Expr::EnumRef(e, v) => write!(f, "{e}::{v}"),
            Expr::Unary(op, e) => match op {
                UnOp::Neg => write!(f, "-{e}"),
                UnOp::Not => write!(f, "not {e}"),
                UnOp::BitNot => write!(f, "~{e}"),
            },
            Expr::Binary(op, a, b) => {
                let s = match op {
                    BinOp::Or => "or",
                    BinOp::And => "and",
                    BinOp::Eq => "==",
                    BinOp::Ne => "!=",
                    BinOp::Lt => "<",
                    BinOp::Le => "<=",
                    BinOp::Gt => ">",
                    BinOp::Ge => ">=",
                    BinOp::BitOr => "|",
                    BinOp::BitXor => "^",
                    BinOp::BitAnd => "&",
                    BinOp::Shl => "<<",
                    BinOp::Shr => ">>",
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                    BinOp::Mod => "%",
                };
                write!(f, "({a} {s} {b})")
            }
            Expr::Ternary(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Expr::Attr(e, a) => write!(f, "{e}.{a}"),
            Expr::Call(e, m, args) => {
                write!(f, "{e}.{m}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ")")
            }
            Expr::Index(e, i) => write!(f, "{e}[{i}]"),
            Expr::List(items) => {
                write!(f, "[")?;
                for (i, a) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, "]")
            }
            Expr::Cast(e, t) => write!(f, "{e}.as<{t}>"),
            Expr::SizeOf(t) => write!(f, "sizeof<{t}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_follows_ks() {
        let e = parse("kind != frame_kind::absolute and (kind.to_i & 0b001) != 0").unwrap();
        assert_eq!(
            e.to_string(),
            "((kind != frame_kind::absolute) and ((kind.to_i & 1) != 0))"
        );
        assert_eq!(parse("1 + 2 * 3").unwrap().to_string(), "(1 + (2 * 3))");
        assert_eq!(parse("a ? 1 : 2").unwrap().to_string(), "(a ? 1 : 2)");
        assert_eq!(parse("not a == b").unwrap().to_string(), "not (a == b)");
        assert_eq!(parse("0x10 << 2").unwrap().to_string(), "(16 << 2)");
        assert_eq!(parse("-5").unwrap(), Expr::Int(-5));
        assert_eq!(parse("1e-6").unwrap(), Expr::Float(1e-6));
        assert_eq!(parse("2.5E+3").unwrap(), Expr::Float(2500.0));
        assert_eq!(parse("0x1e").unwrap(), Expr::Int(0x1e));
        assert_eq!(parse("null").unwrap(), Expr::Null);
        assert!(parse("12ab").is_err());
        assert!(parse("1e").is_err());
    }

    #[test]
    fn comparisons_chain_only_in_parentheses() {
        assert_eq!(
            parse("(a == b) == (c < d)").unwrap().to_string(),
            "((a == b) == (c < d))"
        );
        assert_eq!(parse("(a < b) != c").unwrap().to_string(), "((a < b) != c)");
        for bad in ["a < b < c", "a == b == c", "a < b == c", "(a) == b != c"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("cannot be chained"), "{bad}: {e}");
        }
    }

    #[test]
    fn postfix_forms_and_literals() {
        assert_eq!(parse("a[i + 1].b").unwrap().to_string(), "a[(i + 1)].b");
        assert_eq!(
            parse("[0x01, 2]").unwrap(),
            Expr::List(vec![Expr::Int(1), Expr::Int(2)])
        );
        assert_eq!(parse("[]").unwrap(), Expr::List(vec![]));
        assert_eq!(
            parse("s.substring(2, 7)").unwrap().to_string(),
            "s.substring(2, 7)"
        );
        assert_eq!(
            parse("x.as<outer::inner>.v").unwrap().to_string(),
            "x.as<outer::inner>.v"
        );
        assert_eq!(
            parse("[1, 2].as<u2[]>").unwrap().to_string(),
            "[1, 2].as<u2[]>"
        );
        assert_eq!(
            parse("sizeof<block> + 1").unwrap().to_string(),
            "(sizeof<block> + 1)"
        );
        assert_eq!(parse("a < b").unwrap().to_string(), "(a < b)");
        for bad in [
            "[1, 2", "a[1", "x.as<", "x.as<t", "x.as<t[>", "s.f(1,", "sizeof<>",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn string_escapes_follow_ks() {
        assert_eq!(
            parse(r#""\u00a3\n\101\0""#).unwrap(),
            Expr::Str("£\nA\0".into())
        );
        assert_eq!(parse(r#"'\n'"#).unwrap(), Expr::Str("\\n".into()));
        assert_eq!(parse(r#"f"""#).unwrap(), Expr::Str(String::new()));
        assert_eq!(
            parse(r#"f"a\tb={n + 1}, s={'x}'}""#).unwrap().to_string(),
            r#"((("a\tb=" + (n + 1).to_s) + ", s=") + "x}".to_s)"#
        );
        for bad in [
            r#"f"{a"#, r#"f"a}""#, r#"f"{}""#, r#"f"abc"#, r#"f"{"}"#, "f\"\\",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        // F-strings nest, but only so deep (each level parses its `{...}` again).
        let mut nested = "1".to_owned();
        for _ in 0..4 {
            nested = format!("f\"{{{nested}}}\"");
        }
        assert!(parse(&nested).is_ok(), "{nested}");
        let mut deep = "1".to_owned();
        for _ in 0..40 {
            deep = format!("f\"{{{deep}}}\"");
        }
        assert!(parse(&deep).is_err());
        assert!(parse(r#""\u12""#).is_err());
    }

    #[test]
    fn errors_are_words_not_panics() {
        for bad in [
            "",
            "1 +",
            "(1",
            "a ==",
            "a == b == c",
            "a.",
            "\"x",
            "$",
            "1 2",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = "(".repeat(200) + "1" + &")".repeat(200);
        assert!(parse(&deep).is_err());
    }

    /// A float with a trailing dot and a unary plus parse as Kaitai Struct reads them; a
    /// method call on an integer literal is still one.
    #[test]
    fn trailing_dot_floats_and_unary_plus() {
        assert_eq!(parse("24000.").unwrap(), Expr::Float(24000.0));
        assert_eq!(parse("24000. / 2").unwrap(), parse("24000.0 / 2").unwrap());
        assert_eq!(parse("+5").unwrap(), Expr::Int(5));
        assert_eq!(parse("-+5").unwrap(), Expr::Int(-5));
        assert_eq!(parse("+x * 2").unwrap(), parse("x * 2").unwrap());
        assert_eq!(parse("3 + +4").unwrap(), parse("3 + 4").unwrap());
        assert!(matches!(
            parse("1.to_s").unwrap(),
            Expr::Call(..) | Expr::Attr(..)
        ));
    }
}
