// Semantics check: every computed value is compared with the value the
// shader means; a wrong one makes the invocation spin forever, so the
// program terminates under every scheduler (UNFAIR: P) iff the
// translation computes every value right.
// expect UNFAIR: P;
@group(0) @binding(0) var<storage, read_write> c: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> m: array<atomic<u32>, 2>;
var<private> p: u32 = 3u;

fn fail() { loop { } }

fn bump() -> u32 {
    p = p + 1u;
    return p;
}

fn first_over(limit: u32) -> u32 {
    for (var i = 0u; i < 8u; i++) {
        if i > limit { return i; }
    }
    return 0u;
}

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    var x = wg.x;          // 0 or 1
    let y = x;             // a copy: x changes below
    x = x + 2u;
    if y + 2u != x { fail(); }
    if (x << 1u) != 2u * x || (x >> 1u) != 1u { fail(); }
    if x / 2u != 1u || (x % 2u) != wg.x { fail(); }
    let s = select(5u, 6u, wg.x == 1u);
    if s != 5u + wg.x { fail(); }
    let i = i32(wg.x) + 1i;
    if !(i > 0i) || i >= 3i { fail(); }
}
