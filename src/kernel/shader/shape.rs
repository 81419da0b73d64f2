//! The shape of a shader before naga reads it, and of naga's IR before
//! the translation walks it: bounds on every way a shader's text makes a
//! recursive reader recurse or a reader's work grow faster than the text.
//!
//! naga's GLSL parser is a recursive descent with no depth limit; its WGSL
//! parser limits brackets but reads an `else if` chain as nested `if`s
//! that its lowering, its validator and this crate's translation walk
//! recursively; its GLSL and WGSL readers take time quadratic in a chain
//! of struct types that contain each other. A shader's text is therefore
//! read once as a stream of coarse tokens ([`Tok`]) and held by [`Shape`]
//! to: tokens in all ([`MAX_TOKENS`]), nesting ([`MAX_NESTING`]: open
//! brackets plus the control statements whose statement has not ended at
//! each level: braceless bodies, `else if` chains), tokens in one
//! statement ([`MAX_STATEMENT_TOKENS`]: an expression's depth) and struct
//! declarations ([`MAX_STRUCTS`]).
//! GLSL is fed its preprocessed tokens (`glsl::check_shape`), WGSL the
//! tokens of [`wgsl_tokens`]; SPIR-V has its own bounds
//! (`spirv::check_structure`). Then [`check_ir_depth`] bounds the nesting
//! of every function's blocks in naga's IR, whatever the reader, without
//! recursing itself. The frontend's thread has a stack sized for these
//! bounds (`tests/shader_limits.rs` runs the deepest accepted shapes).

/// The most tokens a shader may have (once its macros are expanded): the
/// largest shader of the peers has a few thousand. naga's readers take
/// time quadratic in a function's expressions (its typifier walks them
/// all for each one added: 200,000 took 27 s) and in the number of
/// functions (70,000 empty ones, 22 s); within this bound, under a second.
pub const MAX_TOKENS: usize = 65_536;
/// The deepest nesting: open brackets (`(`, `[`, `{`) together, plus, at
/// each open level, the control statements (`if`, `for`, `while`, `do`,
/// `switch`) begun since a statement last ended there and not followed by
/// `else`. A braceless body (`if (c) if (c) x;`), an `else if` chain (an
/// `if` in the `else` of the one before) and `for(;;)` chains nest in the
/// parser as deep as they go; a braced `if` counts twice (its keyword and
/// its brace), so 63 braced `if`s nest.
pub const MAX_NESTING: usize = 128;
/// The most tokens between two ends of statements (`;` outside brackets
/// other than braces, `{`, `}`): it bounds an expression's depth (a chain
/// of binary operators, of `?:`, of unary operators).
pub const MAX_STATEMENT_TOKENS: usize = 4096;
/// The most struct declarations: naga's readers take time quadratic in a
/// chain of structs that contain each other (3,000: 2 s; 20,000: minutes).
pub const MAX_STRUCTS: usize = 256;
/// The deepest nesting of blocks in a function of naga's IR (`if`, loop,
/// switch case, block): what the validator and the translation recurse on.
/// As many as SPIR-V's structured constructs (`spirv::MAX_CONSTRUCTS`);
/// GLSL's `?:` is an `if` in the IR, and a chain of 680 fits a statement.
pub const MAX_BLOCK_DEPTH: usize = 1024;

/// A bracket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bracket {
    Paren,
    Square,
    Brace,
}

/// A shader token, as coarse as the bounds need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    Open(Bracket),
    Close(Bracket),
    Semicolon,
    Else,
    /// `if`, `for`, `while`, `do`, `switch`.
    Control,
    Struct,
    Other,
}

/// The shape of the tokens seen so far (see the module's doc).
pub struct Shape {
    tokens: usize,
    /// The open brackets, innermost last, each with the control
    /// statements pending at its level; the first entry is the file's top
    /// level.
    open: Vec<(Bracket, usize)>,
    /// Open brackets plus pending control statements.
    depth: usize,
    /// Tokens since the last end of a statement.
    run: usize,
    /// The token before ended a statement.
    ended: bool,
    structs: usize,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            tokens: 0,
            open: vec![(Bracket::Brace, 0)],
            depth: 0,
            run: 0,
            ended: false,
            structs: 0,
        }
    }
}

impl Shape {
    /// Takes the next token; the bound it passes, as a message.
    pub fn feed(&mut self, t: Tok) -> Result<(), String> {
        self.tokens += 1;
        if self.tokens > MAX_TOKENS {
            return Err(format!(
                "more than {MAX_TOKENS} tokens (in GLSL, once macros are expanded): refused (naga's readers take time quadratic in a function's expressions)"
            ));
        }
        if self.ended && t != Tok::Else {
            self.end_pending();
        }
        self.ended = false;
        match t {
            Tok::Open(b) => {
                self.open.push((b, 0));
                self.depth += 1;
            }
            Tok::Close(_) if self.open.len() > 1 => {
                let (b, chain) = self.open.pop().expect("an open bracket");
                self.depth -= 1 + chain;
                self.ended = b == Bracket::Brace;
            }
            Tok::Semicolon => self.ended = self.open.last().is_some_and(|o| o.0 == Bracket::Brace),
            Tok::Control => {
                self.open.last_mut().expect("the top level").1 += 1;
                self.depth += 1;
            }
            Tok::Struct => {
                self.structs += 1;
                if self.structs > MAX_STRUCTS {
                    return Err(format!(
                        "more than {MAX_STRUCTS} struct declarations: refused (naga's readers take time quadratic in structs that contain each other)"
                    ));
                }
            }
            _ => {}
        }
        if self.depth > MAX_NESTING {
            return Err(format!(
                "brackets and control statements (`(`, `[`, `{{`, `if`, `else if`, loops) nested more than {MAX_NESTING} deep: refused (naga's readers and validator recurse as deep)"
            ));
        }
        if self.ended || matches!(t, Tok::Open(Bracket::Brace) | Tok::Close(Bracket::Brace)) {
            self.run = 0;
        } else {
            self.run += 1;
            if self.run > MAX_STATEMENT_TOKENS {
                return Err(format!(
                    "a statement of more than {MAX_STATEMENT_TOKENS} tokens: refused (naga's readers recurse as deep as an expression nests)"
                ));
            }
        }
        Ok(())
    }

    /// A statement ended and no `else` follows: the control statements
    /// pending at this level have ended.
    fn end_pending(&mut self) {
        let level = self.open.last_mut().expect("the top level");
        self.depth -= level.1;
        level.1 = 0;
    }
}

/// The tokens of WGSL text with their byte offsets, as coarse as [`Tok`]:
/// blankspace and comments (nested `/* */`, and `//` up to any of WGSL's
/// line breaks: a comment ended by a lone CR or U+2028 once hid the rest
/// of the line from these bounds but not from naga) skipped, identifiers
/// and numbers whole (`.` a token of its own outside a number: a member
/// chain `v.x.x...` nests in naga's lowering), every other character a
/// token of its own.
pub fn wgsl_tokens(src: &str) -> impl Iterator<Item = (usize, Tok)> + '_ {
    let b = src.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || loop {
        let c = src[i..].chars().next()?;
        let at = i;
        if c.is_whitespace() || c == '\u{200e}' || c == '\u{200f}' {
            i += c.len_utf8();
        } else if b[i..].starts_with(b"//") {
            i = src[i..]
                .char_indices()
                .find(|&(_, c)| is_line_break(c))
                .map_or(b.len(), |(k, _)| i + k);
        } else if b[i..].starts_with(b"/*") {
            i = comment_end(b, i);
        } else if c.is_ascii_digit() {
            i += src[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(b.len() - i);
            return Some((at, Tok::Other));
        } else if c.is_alphanumeric() || c == '_' {
            i += src[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(b.len() - i);
            return Some((at, keyword(&b[at..i])));
        } else {
            i += c.len_utf8();
            return Some((
                at,
                if c.is_ascii() {
                    punct(c as u8)
                } else {
                    Tok::Other
                },
            ));
        }
    })
}

/// WGSL's line breaks, which end a `//` comment.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\u{b}' | '\u{c}' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// The byte after the (nested) block comment opening at `i`.
pub(super) fn comment_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// An identifier's token (a keyword the bounds know, or other).
pub fn keyword(word: &[u8]) -> Tok {
    match word {
        b"if" | b"for" | b"while" | b"do" | b"switch" => Tok::Control,
        b"else" => Tok::Else,
        b"struct" => Tok::Struct,
        _ => Tok::Other,
    }
}

/// A punctuation character's token.
pub fn punct(c: u8) -> Tok {
    match c {
        b'(' => Tok::Open(Bracket::Paren),
        b'[' => Tok::Open(Bracket::Square),
        b'{' => Tok::Open(Bracket::Brace),
        b')' => Tok::Close(Bracket::Paren),
        b']' => Tok::Close(Bracket::Square),
        b'}' => Tok::Close(Bracket::Brace),
        b';' => Tok::Semicolon,
        _ => Tok::Other,
    }
}

/// Refuses WGSL text past the bounds of [`Shape`]: the message and the
/// byte offset of the token where it goes too far.
pub fn check_wgsl(src: &str) -> Result<(), (usize, String)> {
    let mut shape = Shape::default();
    // Template lists (`array<array<u32, 2>, 2>`): a `<` after an
    // identifier opens one, `>` closes one, a statement's end closes all.
    // naga stops at 200 levels with an "internal error" and no position.
    let mut templates = 0usize;
    let b = src.as_bytes();
    // The token before was an identifier (blankspace and comments between
    // them do not matter: `array <` and `array/**/<` open a list too).
    let mut after_ident = false;
    for (at, t) in wgsl_tokens(src) {
        shape.feed(t).map_err(|m| (at, m))?;
        let ident = src[at..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        let opens = std::mem::replace(&mut after_ident, ident);
        match b[at] {
            b'<' if opens => templates += 1,
            b'>' => templates = templates.saturating_sub(1),
            b';' | b'{' | b'}' => templates = 0,
            _ => {}
        }
        if templates > MAX_NESTING {
            return Err((
                at,
                format!("template lists (`array<array<...>>`) nested more than {MAX_NESTING} deep: refused (naga's reader stops at 200 with no position)"),
            ));
        }
    }
    Ok(())
}

/// Refuses a module where a function's blocks nest deeper than
/// [`MAX_BLOCK_DEPTH`]: the message and the span of the statement where
/// they do. Walks with a stack of its own.
pub fn check_ir_depth(module: &naga::Module) -> Result<(), (naga::Span, String)> {
    let bodies = module
        .functions
        .iter()
        .map(|(_, f)| &f.body)
        .chain(module.entry_points.iter().map(|e| &e.function.body));
    for body in bodies {
        let mut stack = vec![(body, 0usize)];
        while let Some((block, depth)) = stack.pop() {
            for (s, span) in block.span_iter() {
                let inner = children(s);
                if !inner.is_empty() && depth >= MAX_BLOCK_DEPTH {
                    return Err((
                        *span,
                        format!("blocks nested more than {MAX_BLOCK_DEPTH} deep (`if`s, `else if` chains, loops, switches): refused"),
                    ));
                }
                stack.extend(inner.into_iter().map(|b| (b, depth + 1)));
            }
        }
    }
    Ok(())
}

/// The blocks a statement holds.
pub(super) fn children(s: &naga::Statement) -> Vec<&naga::Block> {
    use naga::Statement as S;
    match s {
        S::Block(b) => vec![b],
        S::If { accept, reject, .. } => vec![accept, reject],
        S::Loop {
            body, continuing, ..
        } => vec![body, continuing],
        S::Switch { cases, .. } => cases.iter().map(|c| &c.body).collect(),
        _ => Vec::new(),
    }
}
