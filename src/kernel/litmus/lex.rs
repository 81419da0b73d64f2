//! Tokens of the litmus format, each with its line and column (from 1,
//! columns counted in characters) and its byte range in the source.

use crate::error::ParseError;
use crate::kernel::program::MAX_NAME_LEN;
use crate::locate::Position;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Num(u64),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
    pub col: usize,
    /// Byte offsets of the token in the source.
    pub start: usize,
    pub end: usize,
}

/// Longest first, so that `==` wins over `=`.
const PUNCTS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "{", "}", "(", ")", "[", "]", ";", ",", ":",
    "=", "<", ">", "+", "-", "*", "&", "|", "^", "!", ".",
];

/// The largest number the format accepts; larger ones are an error here
/// rather than a wrap-around later.
pub const MAX_NUMBER: u64 = 1 << 32;

struct Cursor<'a> {
    src: &'a str,
    pos: usize,
    /// Line ends by the one rule of [`crate::locate::Position`]; columns
    /// in characters.
    at: Position,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        self.at.advance(c);
        Some(c)
    }

    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }
}

/// Splits a litmus source into tokens (comments and blanks dropped), ending
/// with an `Eof` token.
pub fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut c = Cursor {
        src,
        pos: 0,
        at: Position::default(),
    };
    let mut out = Vec::new();
    loop {
        skip_blanks(&mut c)?;
        let (line, col, start) = (c.at.line, c.at.col, c.pos);
        let Some(ch) = c.peek() else {
            out.push(Token {
                tok: Tok::Eof,
                line,
                col,
                start,
                end: start,
            });
            return Ok(out);
        };
        let tok = token(&mut c, ch)?;
        out.push(Token {
            tok,
            line,
            col,
            start,
            end: c.pos,
        });
    }
}

/// Moves the cursor past blanks and comments (`// ...` to the line end,
/// `/* ... */` not nested), to where the next token or the end is. An
/// unterminated block comment is an error at its `/*`, where the reader
/// can see it begin.
fn skip_blanks(c: &mut Cursor) -> Result<(), ParseError> {
    loop {
        match c.peek() {
            Some(ch) if ch.is_whitespace() => {
                c.bump();
            }
            Some('/') if c.rest().starts_with("//") => {
                while let Some(ch) = c.peek() {
                    if ch == '\n' || ch == '\r' {
                        break;
                    }
                    c.bump();
                }
            }
            Some('/') if c.rest().starts_with("/*") => {
                let (line, col) = (c.at.line, c.at.col);
                c.bump();
                c.bump();
                loop {
                    if c.rest().starts_with("*/") {
                        c.bump();
                        c.bump();
                        break;
                    }
                    if c.bump().is_none() {
                        return Err(ParseError::new(line, col, "unterminated comment"));
                    }
                }
            }
            _ => return Ok(()),
        }
    }
}

/// Reads the token that starts with `ch` at the cursor (a name, a number
/// or a punctuation mark), leaving the cursor after it. Names and numbers
/// are bounded here, at the token's own position, so that later stages
/// never see an oversized one.
fn token(c: &mut Cursor, ch: char) -> Result<Tok, ParseError> {
    let (line, col, start) = (c.at.line, c.at.col, c.pos);
    if ch.is_ascii_alphabetic() || ch == '_' {
        while c
            .peek()
            .is_some_and(|d| d.is_ascii_alphanumeric() || d == '_')
        {
            c.bump();
        }
        let word = &c.src[start..c.pos];
        if word.len() > MAX_NAME_LEN {
            return Err(ParseError::new(
                line,
                col,
                format!("a name longer than {MAX_NAME_LEN} characters"),
            ));
        }
        Ok(Tok::Ident(word.to_string()))
    } else if ch.is_ascii_digit() {
        while c.peek().is_some_and(|d| d.is_ascii_digit()) {
            c.bump();
        }
        let digits = &c.src[start..c.pos];
        match digits.parse::<u64>() {
            Ok(n) if n <= MAX_NUMBER => Ok(Tok::Num(n)),
            _ => Err(ParseError::new(
                line,
                col,
                format!("number `{}` is too large", crate::error::excerpt(digits)),
            )),
        }
    } else if let Some(p) = PUNCTS.iter().find(|p| c.rest().starts_with(**p)) {
        for _ in 0..p.len() {
            c.bump();
        }
        Ok(Tok::Punct(p))
    } else {
        Err(ParseError::new(
            line,
            col,
            format!("unexpected character `{}`", ch.escape_default()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_positions() {
        let t = lex("a == 1; // x\n/* y\n */ b<<2").unwrap();
        let kinds: Vec<&Tok> = t.iter().map(|t| &t.tok).collect();
        assert_eq!(
            kinds,
            vec![
                &Tok::Ident("a".into()),
                &Tok::Punct("=="),
                &Tok::Num(1),
                &Tok::Punct(";"),
                &Tok::Ident("b".into()),
                &Tok::Punct("<<"),
                &Tok::Num(2),
                &Tok::Eof
            ]
        );
        assert_eq!((t[4].line, t[4].col), (3, 5));
        assert_eq!(lex("x @").unwrap_err().col, 3);
        assert_eq!(lex("/* open").unwrap_err().msg, "unterminated comment");
        assert!(lex("99999999999999999999").is_err());
        assert_eq!(lex("é").unwrap_err().col, 1);
        // Issue 20 item 11: CR and CRLF line ends count as one line each,
        // and end a `//` comment (which swallowed a CR-only file's rest).
        for nl in ["\n", "\r", "\r\n"] {
            let src = format!("a // c{nl}b{nl}{nl}  @");
            let t = lex(&src[..src.len() - 1]).unwrap();
            assert_eq!(t[1].tok, Tok::Ident("b".into()), "{nl:?}");
            assert_eq!((t[1].line, t[1].col), (2, 1), "{nl:?}");
            let e = lex(&src).unwrap_err();
            assert_eq!((e.line, e.col), (4, 3), "{nl:?}");
        }
    }
}
