//! GLSL in: naga's `glsl-in` frontend for compute shaders (`.comp`), its
//! first error at its position.
//!
//! naga's GLSL frontend has no `atomic*` built-ins. Before parsing, each
//! call's name is capitalised (`atomicAdd` -> `AtomicAdd`: same length, so
//! every later position is unchanged) and a one-line prelude after the
//! `#version` line declares those functions with an `inout` first
//! parameter; the translation recognises the calls
//! ([`super::lower::glsl_atomics`]) and makes each one atomic instruction.
//! Positions inside the prelude's line are mapped back by [`Prepared`].
//!
//! naga's GLSL parser and its lowering are recursive descents with no
//! depth limit: 6,000 nested parentheses, a chain of 10,000 `+ 0u` or
//! 3,000 nested `if`s overflow the stack and abort the process, and a
//! macro that doubles at each level (`#define A1 (A0 + A0)` ...) expands
//! to more tokens than memory holds. [`check_shape`] runs naga's own
//! preprocessor first (with bounds on macro arguments patched in:
//! `vendor/README.md`) and bounds what the parser will see
//! ([`super::shape`]: tokens after expansion, nesting, tokens in one
//! statement, struct declarations), so that such a file is one error line
//! at the place it goes too far; the frontend then runs on a thread whose
//! stack is sized for those bounds ([`super::translate`]).

use crate::error::FileError;
use std::path::Path;

/// The GLSL text naga parses: the user's, with atomics renamed and the
/// prelude inserted at byte `at` (`len` bytes).
pub struct Prepared {
    pub text: String,
    pub at: usize,
    pub len: usize,
}

impl Prepared {
    /// The user's byte offset of an offset into the prepared text.
    pub fn original(&self, off: usize) -> usize {
        if off >= self.at + self.len {
            off - self.len
        } else {
            off.min(self.at)
        }
    }
}

/// The functions renamed: the atomics, then the subgroup collectives of
/// the kernel language (`GL_KHR_shader_subgroup_vote` and `_ballot`),
/// which naga's GLSL frontend does not know either.
const ATOMICS: [&str; 11] = [
    "atomicAdd",
    "atomicMin",
    "atomicMax",
    "atomicAnd",
    "atomicOr",
    "atomicXor",
    "atomicExchange",
    "atomicCompSwap",
    "subgroupAll",
    "subgroupAny",
    "subgroupBroadcastFirst",
];

/// The prelude: every renamed atomic for uint and int (bodies are never
/// translated: the calls are).
fn prelude() -> String {
    let mut p = String::from(
        "bool SubgroupAll(bool v) { return v; } bool SubgroupAny(bool v) { return v; } \
         uint SubgroupBroadcastFirst(uint v) { return v; } ",
    );
    for t in ["uint", "int"] {
        for a in ATOMICS.iter().filter(|a| a.starts_with("atomic")) {
            let name = capital(a);
            if *a == "atomicCompSwap" {
                p.push_str(&format!(
                    "{t} {name}(inout {t} m, {t} c, {t} v) {{ return m; }} "
                ));
            } else {
                p.push_str(&format!("{t} {name}(inout {t} m, {t} v) {{ return m; }} "));
            }
        }
    }
    p
}

fn capital(a: &str) -> String {
    let mut c = a.chars();
    c.next().map_or(String::new(), |f| {
        f.to_ascii_uppercase().to_string() + c.as_str()
    })
}

/// Renames the atomics (whole identifiers only) and inserts the prelude at
/// the start of the line after `#version` (or at the start).
pub fn prepare(src: &str) -> Prepared {
    let mut text = String::with_capacity(src.len());
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < src.len() {
        let word_start = i == 0 || !is_ident(bytes[i - 1]);
        let hit = word_start
            .then(|| {
                ATOMICS.iter().find(|a| {
                    src[i..].starts_with(**a)
                        && !bytes.get(i + a.len()).is_some_and(|&b| is_ident(b))
                })
            })
            .flatten();
        if let Some(a) = hit {
            text.push_str(&capital(a));
            i += a.len();
        } else {
            let ch = src[i..].chars().next().unwrap_or(' ');
            text.push(ch);
            i += ch.len_utf8();
        }
    }
    let at = version_line_end(&text);
    let p = prelude() + "\n";
    text.insert_str(at, &p);
    Prepared {
        text,
        at,
        len: p.len(),
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The byte after the `#version` line's newline (0 without one).
fn version_line_end(text: &str) -> usize {
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("#version") {
            return off + line.len();
        }
        off += line.len();
    }
    0
}

/// Refuses, before naga parses it, a shader whose preprocessed tokens go
/// past the bounds of [`super::shape::Shape`], or past the preprocessor's
/// bounds (`vendor/pp-rs`: `MAX_ARGUMENT_TOKENS`, `MAX_ARGUMENT_NESTING`,
/// `MAX_IF_NESTING`): one error at the token
/// where it does. Any other preprocessor error is reported here too, at
/// its place (naga reports them with no position).
pub fn check_shape(path: &Path, src: &str, prepared: &Prepared) -> Result<(), FileError> {
    use super::shape::{keyword, punct, Shape, Tok};
    use pp_rs::token::{PreprocessorError, Punct, TokenValue};
    let mut shape = Shape::default();
    let refuse = |at: u32, msg: String| {
        let (line, col) = super::line_col(src, prepared.original(at as usize) as u32);
        FileError {
            path: path.to_path_buf(),
            line,
            col,
            msg: format!("GLSL: {msg}"),
        }
    };
    for item in pp_rs::pp::Preprocessor::new(&prepared.text) {
        let token = match item {
            Ok(token) => token,
            Err((PreprocessorError::RecursionLimitReached, at)) => {
                return Err(refuse(at.start, format!(
                    "past the preprocessor's bounds (a macro's arguments of at most {} tokens, as written or expanded; macro invocations nested at most {} deep in arguments; `#if` expressions nested at most {} deep): refused",
                    pp_rs::pp::MAX_ARGUMENT_TOKENS,
                    pp_rs::pp::MAX_ARGUMENT_NESTING,
                    pp_rs::pp::MAX_IF_NESTING
                )));
            }
            Err((e, at)) => return Err(refuse(at.start, preprocessor_error(&e))),
        };
        let tok = match &token.value {
            TokenValue::Ident(word) => keyword(word.as_bytes()),
            TokenValue::Punct(p) => match p {
                Punct::LeftParen => punct(b'('),
                Punct::RightParen => punct(b')'),
                Punct::LeftBracket => punct(b'['),
                Punct::RightBracket => punct(b']'),
                Punct::LeftBrace => punct(b'{'),
                Punct::RightBrace => punct(b'}'),
                Punct::Semicolon => punct(b';'),
                _ => Tok::Other,
            },
            _ => Tok::Other,
        };
        shape
            .feed(tok)
            .map_err(|m| refuse(token.location.start, m))?;
    }
    Ok(())
}

/// A preprocessor error in words: `UnexpectedCharacter` as "unexpected
/// character", with what it holds (`UnexpectedToken(...)`) escaped.
fn preprocessor_error(e: &pp_rs::token::PreprocessorError) -> String {
    let debug = format!("{e:?}");
    let (name, rest) = debug.split_at(debug.find('(').unwrap_or(debug.len()));
    let mut words = String::new();
    for c in name.chars() {
        if c.is_uppercase() && !words.is_empty() {
            words.push(' ');
        }
        words.extend(c.to_lowercase());
    }
    format!("preprocessor: {words}{}", crate::error::printable(rest))
}

/// Parses prepared GLSL compute shader text into naga's IR; the first error
/// is one error at its line and column in the user's text.
pub fn parse(path: &Path, src: &str, prepared: &Prepared) -> Result<naga::Module, FileError> {
    let options = naga::front::glsl::Options::from(naga::ShaderStage::Compute);
    naga::front::glsl::Frontend::default()
        .parse(&options, &prepared.text)
        .map_err(|errs| {
            let first = errs.errors.first();
            let (line, col) = first.and_then(|e| e.meta.to_range()).map_or((0, 0), |r| {
                super::line_col(src, prepared.original(r.start) as u32)
            });
            let msg = first.map_or("unknown error".to_string(), |e| e.kind.to_string());
            FileError {
                path: path.to_path_buf(),
                line,
                col,
                msg: format!(
                    "GLSL: {}",
                    msg.replace("Atomic", "atomic")
                        .replace("Subgroup", "subgroup")
                ),
            }
        })
}
