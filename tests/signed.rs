//! Signed 32-bit integers (issue 42, docs/KERNEL.md §10.3), against an
//! independent second implementation: random WGSL expressions over `i32`
//! values read from memory, evaluated here with Rust's `i32` arithmetic
//! (WGSL's: wrapping `+ - *`, `/` and `%` rounding toward zero, `>>`
//! shifting the sign in), and translated, checked and run on the kernel
//! machine. Wherever the translation is accepted, the value the program
//! stores is the Rust one (the value rule is sound); wherever every
//! intermediate value lies in -128..=127 and no signed `/`, `%` or `>>`
//! meets a negative value, it is accepted (two's complement values hold
//! it).

use progress_litmus::kernel::machine::Machine;
use progress_litmus::kernel::model::Mode;
use progress_litmus::kernel::shader::{translate, Launch, Translation};
use proptest::prelude::*;
use std::path::Path;

/// An `i32` expression over the two values `a` and `b`.
#[derive(Clone, Debug)]
enum Ex {
    Lit(i32),
    A,
    B,
    Bin(&'static str, Box<Ex>, Box<Ex>),
    /// `select(0i, 1i, x OP y)`: a comparison as a value.
    Cmp(&'static str, Box<Ex>, Box<Ex>),
    /// `x / 2i`, `x % 4i` or `x >> 1u`.
    Div(&'static str, Box<Ex>),
    Un(&'static str, Box<Ex>),
}

fn ex() -> impl Strategy<Value = Ex> {
    let lit = prop_oneof![8 => -9i32..10, 1 => Just(-128), 1 => Just(127)];
    let leaf = prop_oneof![lit.prop_map(Ex::Lit), Just(Ex::A), Just(Ex::B)];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (
                prop::sample::select(vec!["+", "-", "*", "&", "|", "^"]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(o, x, y)| Ex::Bin(o, Box::new(x), Box::new(y))),
            (
                prop::sample::select(vec!["<", "<=", ">", ">=", "==", "!="]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(o, x, y)| Ex::Cmp(o, Box::new(x), Box::new(y))),
            (prop::sample::select(vec!["/", "%", ">>"]), inner.clone())
                .prop_map(|(o, x)| Ex::Div(o, Box::new(x))),
            (prop::sample::select(vec!["-", "~"]), inner).prop_map(|(o, x)| Ex::Un(o, Box::new(x))),
        ]
    })
}

impl Ex {
    fn wgsl(&self) -> String {
        match self {
            Ex::Lit(v) => format!("({v}i)"),
            Ex::A => "a".into(),
            Ex::B => "b".into(),
            Ex::Bin(o, x, y) => format!("({} {o} {})", x.wgsl(), y.wgsl()),
            Ex::Cmp(o, x, y) => format!("select(0i, 1i, {} {o} {})", x.wgsl(), y.wgsl()),
            Ex::Div("/", x) => format!("({} / 2i)", x.wgsl()),
            Ex::Div("%", x) => format!("({} % 4i)", x.wgsl()),
            Ex::Div(_, x) => format!("({} >> 1u)", x.wgsl()),
            Ex::Un(o, x) => format!("({o}{})", x.wgsl()),
        }
    }

    /// The value, as WGSL computes it, and whether two's complement
    /// values of 8 bits hold every step (every intermediate in -128..=127,
    /// no signed `/`, `%` or `>>` of a negative value).
    fn eval(&self, a: i32, b: i32) -> (i32, bool) {
        let (v, ok) = match self {
            Ex::Lit(v) => (*v, true),
            Ex::A => (a, true),
            Ex::B => (b, true),
            Ex::Bin(o, x, y) => {
                let ((x, ox), (y, oy)) = (x.eval(a, b), y.eval(a, b));
                let v = match *o {
                    "+" => x.wrapping_add(y),
                    "-" => x.wrapping_sub(y),
                    "*" => x.wrapping_mul(y),
                    "&" => x & y,
                    "|" => x | y,
                    _ => x ^ y,
                };
                (v, ox && oy)
            }
            Ex::Cmp(o, x, y) => {
                let ((x, ox), (y, oy)) = (x.eval(a, b), y.eval(a, b));
                let v = match *o {
                    "<" => x < y,
                    "<=" => x <= y,
                    ">" => x > y,
                    ">=" => x >= y,
                    "==" => x == y,
                    _ => x != y,
                };
                (i32::from(v), ox && oy)
            }
            Ex::Div(o, x) => {
                let (x, ok) = x.eval(a, b);
                let v = match *o {
                    "/" => x / 2,
                    "%" => x % 4,
                    _ => x >> 1,
                };
                (v, ok && x >= 0)
            }
            Ex::Un(o, x) => {
                let (x, ok) = x.eval(a, b);
                (if *o == "-" { x.wrapping_neg() } else { !x }, ok)
            }
        };
        (v, ok && (-128..128).contains(&v))
    }
}

/// The shader: `a` and `b` read from memory (initialised to `ia` and
/// `ib`, offset by -8 so that they may be negative), the expression
/// stored to `out`.
fn shader(e: &Ex, ia: u32, ib: u32) -> String {
    format!(
        "// workgroups 1;\n// init inp = {ia}, {ib};\n\
         @group(0) @binding(0) var<storage, read_write> inp: array<atomic<i32>, 2>;\n\
         @group(0) @binding(1) var<storage, read_write> out: atomic<i32>;\n\
         @compute @workgroup_size(1)\nfn main() {{\n\
         let a = atomicLoad(&inp[0]) - 8i;\n let b = atomicLoad(&inp[1]) - 8i;\n\
         atomicStore(&out, {});\n}}\n",
        e.wgsl()
    )
}

/// Runs the one invocation of `t`'s program to its end: the value it
/// stored to `out`, as the shader's `i32`.
fn run(t: &Translation) -> i32 {
    let p = &t.program;
    let m = Machine::new(p, Mode::Interleaved).unwrap();
    let mut s = [0u64; 7];
    assert!(m.bits() <= 7 * 64);
    m.init(&mut s);
    let mut next = Vec::new();
    loop {
        next.clear();
        m.steps(&s, 0, &mut next).unwrap();
        let Some((_, n)) = next.pop() else { break };
        assert!(next.is_empty(), "one invocation steps one way");
        s = n;
    }
    assert!(m.finished(&s, 0), "the invocation ran to its end");
    let loc = p.locations.iter().position(|l| l.name == "out").unwrap();
    let v = i32::from(m.mem(&s, m.cell_of(loc, 0, 0)));
    let values = i32::from(p.values);
    if t.sext && 2 * v >= values {
        v - values
    } else {
        v
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn signed_values_are_exact_where_accepted_and_accepted_where_they_fit(
        e in ex(),
        ia in 0u32..16,
        ib in 0u32..16,
    ) {
        let src = shader(&e, ia, ib);
        let (want, fits) = e.eval(ia as i32 - 8, ib as i32 - 8);
        match translate(Path::new("expr.wgsl"), src.as_bytes(), &Launch::default()) {
            Ok(t) => prop_assert_eq!(run(&t), want, "{}", src),
            Err(err) => prop_assert!(
                !fits,
                "refused though 8-bit two's complement values hold it: {}\n{}",
                err,
                src
            ),
        }
    }
}
