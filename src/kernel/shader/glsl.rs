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
use std::collections::HashSet;
use std::path::Path;

/// The GLSL text naga parses: the user's, with atomics renamed and the
/// prelude inserted at byte `at` (`len` bytes), and what
/// [`published_forms`] rewrote.
pub struct Prepared {
    pub text: String,
    pub at: usize,
    pub len: usize,
    /// Block instance names renamed for naga (alias, the shader's name).
    pub aliases: Vec<(String, String)>,
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
pub(crate) const ATOMICS: [&str; 13] = [
    "atomicLoad",
    "atomicStore",
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

/// GLSL's memory barriers (fences): the prelude defines each as a
/// function that does nothing.
const MEMORY_BARRIERS: [&str; 5] = [
    "memoryBarrier",
    "memoryBarrierBuffer",
    "memoryBarrierShared",
    "memoryBarrierImage",
    "groupMemoryBarrier",
];

/// The prelude: every renamed atomic for uint and int (bodies are never
/// translated: the calls are).
fn prelude() -> String {
    let mut p = String::from(
        "bool SubgroupAll(bool v) { return v; } bool SubgroupAny(bool v) { return v; } \
         uint SubgroupBroadcastFirst(uint v) { return v; } ",
    );
    // GLSL's memory barriers, which naga's GLSL frontend does not know:
    // no-ops under sequentially consistent memory (docs/KERNEL.md §10.2).
    for f in MEMORY_BARRIERS {
        p.push_str(&format!("void {f}() {{ }} "));
    }
    // GL_KHR_memory_scope_semantics: its constants, and its forms of the
    // atomics with a scope and semantics (the scope is read, §10.2).
    for (name, v) in SCOPE_CONSTANTS {
        p.push_str(&format!("const int {name} = {v}; "));
    }
    let sem = "int s, int a, int b";
    for t in ["uint", "int"] {
        for a in ATOMICS.iter().filter(|a| a.starts_with("atomic")) {
            let name = capital(a);
            match *a {
                "atomicLoad" => {
                    p.push_str(&format!("{t} {name}(inout {t} m, {sem}) {{ return m; }} "))
                }
                "atomicStore" => {
                    p.push_str(&format!("void {name}(inout {t} m, {t} v, {sem}) {{ }} "))
                }
                "atomicCompSwap" => p.push_str(&format!(
                    "{t} {name}(inout {t} m, {t} c, {t} v) {{ return m; }} \
                     {t} {name}(inout {t} m, {t} c, {t} v, {sem}, int d, int e) {{ return m; }} "
                )),
                _ => p.push_str(&format!(
                    "{t} {name}(inout {t} m, {t} v) {{ return m; }} \
                     {t} {name}(inout {t} m, {t} v, {sem}) {{ return m; }} "
                )),
            }
        }
    }
    p
}

/// GL_KHR_memory_scope_semantics's constants (naga's GLSL frontend does
/// not know them), with the values of SPIR-V's scopes and semantics.
const SCOPE_CONSTANTS: [(&str, u32); 17] = [
    ("gl_ScopeDevice", 1),
    ("gl_ScopeWorkgroup", 2),
    ("gl_ScopeSubgroup", 3),
    ("gl_ScopeInvocation", 4),
    ("gl_ScopeQueueFamily", 5),
    ("gl_StorageSemanticsNone", 0),
    ("gl_StorageSemanticsBuffer", 0x40),
    ("gl_StorageSemanticsShared", 0x100),
    ("gl_StorageSemanticsImage", 0x800),
    ("gl_StorageSemanticsOutput", 0x1000),
    ("gl_SemanticsRelaxed", 0),
    ("gl_SemanticsAcquire", 0x2),
    ("gl_SemanticsRelease", 0x4),
    ("gl_SemanticsAcquireRelease", 0x8),
    ("gl_SemanticsMakeAvailable", 0x2000),
    ("gl_SemanticsMakeVisible", 0x4000),
    ("gl_SemanticsVolatile", 0x8000),
];

fn capital(a: &str) -> String {
    let mut c = a.chars();
    c.next().map_or(String::new(), |f| {
        f.to_ascii_uppercase().to_string() + c.as_str()
    })
}

/// Renames the atomics (whole identifiers only) and inserts the prelude at
/// the start of the line after `#version` (or at the start).
pub fn prepare(user: &str) -> Prepared {
    let (forms, aliases) = published_forms(user);
    let src = forms.as_str();
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
        aliases,
    }
}

/// The launch lines of the TLA+ forward-progress project's GLSL shaders,
/// in the words of the `//` annotations: `layout(tla_num_workgroups = W)
/// in;` is `workgroups W`, `layout(tla_subgroup_size = S) in;` is
/// `subgroup_size S`, and `#pragma scheduler(M)` (the model its checker
/// decides the shader under) is `model M`. (keyword, value), or `None` for
/// any other line.
pub fn launch_line(line: &str) -> Option<(&'static str, &str)> {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("#pragma") {
        let inner = rest
            .trim_start()
            .strip_prefix("scheduler")?
            .trim_start()
            .strip_prefix('(')?
            .strip_suffix(')')?;
        return Some(("model", inner.trim()));
    }
    let rest = t.strip_prefix("layout")?.trim_start().strip_prefix('(')?;
    let (inside, after) = rest.split_once(')')?;
    if after.trim().strip_prefix("in")?.trim() != ";" {
        return None;
    }
    let (key, value) = inside.split_once('=')?;
    let kw = match key.trim() {
        "tla_num_workgroups" => "workgroups",
        "tla_subgroup_size" => "subgroup_size",
        _ => return None,
    };
    Some((kw, value.trim()))
}

/// Where `text` (the prepared text naga reads) declares its workgroup
/// size: the first `local_size_x` outside comments. naga's GLSL reader
/// gives statements no place, so an error about the size points here.
pub fn size_span(text: &str) -> Option<naga::Span> {
    let b = text.as_bytes();
    let word = b"local_size_x";
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            i += b[i..]
                .iter()
                .position(|&c| c == b'\n' || c == b'\r')
                .unwrap_or(b.len() - i);
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i += 2 + b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len() - i - 2, |k| k + 2);
            continue;
        }
        let alone =
            (i == 0 || !is_ident(b[i - 1])) && b.get(i + word.len()).is_none_or(|&c| !is_ident(c));
        if b[i..].starts_with(word) && alone {
            return Some(naga::Span::new(i as u32, (i + word.len()) as u32));
        }
        i += 1;
    }
    None
}

/// GLSL as compute shaders are published, rewritten for naga's frontend
/// without moving a byte (every later position stays the user's), each
/// rewrite one that changes no behaviour under sequentially consistent
/// memory (docs/KERNEL.md §10.2):
/// - `#version 430` is read as `#version 450` (naga takes 440 and later;
///   4.50 keeps every construct of 4.30 the translation takes);
/// - the memory qualifiers `volatile` and `coherent`, which naga does not
///   implement, become blanks: they order and publish accesses, and every
///   access is already sequentially consistent here;
/// - the TLA+ project's launch lines ([`launch_line`]) become blanks
///   (they are read as annotations, and naga knows no `tla_` layout);
/// - a block instance that has a member of its own name
///   (`buffer C { uint counter; } counter;`) is renamed to an alias of the
///   same length: naga also declares a block's members globally, so the
///   member would hide the instance. The translation names it back.
pub fn published_forms(src: &str) -> (String, Vec<(String, String)>) {
    let mut out = String::with_capacity(src.len());
    // Lines end at `\n`, `\r` or `\r\n` (the tools' one rule); a blanked
    // line keeps its bytes' count, whatever its characters.
    for line in src.split_inclusive(['\n', '\r']) {
        let body = line.trim_end_matches(['\n', '\r']);
        let is_layout = launch_line(body).is_some() && !body.trim_start().starts_with('#');
        if is_layout {
            out.extend(std::iter::repeat_n(' ', body.len()));
            out.push_str(&line[body.len()..]);
        } else if body.trim_start().starts_with("#version") {
            out.push_str(&line.replacen(" 430", " 450", 1));
        } else {
            out.push_str(line);
        }
    }
    for q in ["volatile", "coherent"] {
        out = replace_word(&out, q, &" ".repeat(q.len()));
    }
    // One pass for the names the text holds, one for the renaming: a
    // text of many blocks costs its length, not its length squared.
    let mut held: HashSet<String> = HashSet::new();
    rewrite_idents(&out, |w, _, _| {
        held.insert(w.to_string());
        None
    });
    let mut aliases = Vec::new();
    for instance in self_named_instances(&out) {
        if let Some(alias) = alias_for(&held, &instance) {
            held.insert(alias.clone());
            aliases.push((alias, instance));
        }
    }
    if !aliases.is_empty() {
        out = rename_instances(&out, &aliases);
    }
    (out, aliases)
}

/// Every whole-word `word` of `text` replaced by `with` (same length).
fn replace_word(text: &str, word: &str, with: &str) -> String {
    rewrite_idents(text, |w, _, _| (w == word).then(|| with.to_string()))
}

/// `text` with each identifier `w` for which `f(w, before, after)` (the
/// text before and after it) gives a replacement replaced; one pass.
fn rewrite_idents(text: &str, mut f: impl FnMut(&str, &str, &str) -> Option<String>) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if is_ident(b[i]) && (i == 0 || !is_ident(b[i - 1])) {
            let end = (i..text.len())
                .find(|&k| !is_ident(b[k]))
                .unwrap_or(text.len());
            let w = &text[i..end];
            match f(w, &text[..i], &text[end..]) {
                Some(with) => out.push_str(&with),
                None => out.push_str(w),
            }
            i = end;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The instance names of blocks (`NAME { ... } INSTANCE;`) that one of
/// their own members also has. One pass: each `{ ... }` without braces
/// inside (a block's members) is looked at once.
fn self_named_instances(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut open = None;
    for (at, c) in text.char_indices() {
        match c {
            '{' => open = Some(at),
            '}' => {
                if let Some(o) = open.take() {
                    if let Some(name) = self_named(text, o, at) {
                        if !found.contains(&name) {
                            found.push(name);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The instance name after the block whose braces are at `open` and
/// `close`, if one of its members has it.
fn self_named(text: &str, open: usize, close: usize) -> Option<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // A block: its opening brace follows a name, not `)` (a function).
    if !text[..open].trim_end().ends_with(ident) {
        return None;
    }
    let rest = text[close + 1..].trim_start();
    let name: String = rest.chars().take_while(|&c| ident(c)).collect();
    let after = rest[name.len()..].trim_start();
    if name.is_empty() || !(after.starts_with(';') || after.starts_with('[')) {
        return None;
    }
    text[open + 1..close]
        .split(';')
        .any(|m| m.trim().rsplit(|c: char| !ident(c)).find(|w| !w.is_empty()) == Some(&name))
        .then_some(name)
}

/// An identifier of `name`'s length that the text does not hold (`held`:
/// its identifiers).
fn alias_for(held: &HashSet<String>, name: &str) -> Option<String> {
    (0..name.len()).find_map(|k| {
        ['Q', 'Z', 'X', 'J'].iter().find_map(|&c| {
            let mut a: Vec<u8> = name.bytes().collect();
            a[k] = c as u8;
            let a = String::from_utf8(a).ok()?;
            (!held.contains(&a)).then_some(a)
        })
    })
}

/// Each instance renamed to its alias (`aliases`: alias, instance) in its
/// declaration (after the block's `}`) and its uses (`instance.member`,
/// `instance[i]`), not where it is the member (its declaration in the
/// block, `x.instance`).
fn rename_instances(text: &str, aliases: &[(String, String)]) -> String {
    let by_instance: std::collections::HashMap<&str, &str> = aliases
        .iter()
        .map(|(a, i)| (i.as_str(), a.as_str()))
        .collect();
    rewrite_idents(text, |w, before, after| {
        let alias = by_instance.get(w)?.to_string();
        let (before, after) = (before.trim_end(), after.trim_start());
        let used = after.starts_with('.') || after.starts_with('[');
        ((used && !before.ends_with('.')) || before.ends_with('}')).then_some(alias)
    })
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The byte after the `#version` line's end (`\n`, `\r` or `\r\n`; 0
/// without one).
fn version_line_end(text: &str) -> usize {
    let mut off = 0;
    for line in text
        .split_inclusive('\n')
        .flat_map(|l| l.split_inclusive('\r'))
    {
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
