// Semantics check (control flow, calls, private variables): every computed value is compared with the value the
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
    let q = bump();        // p: 3 -> 4
    if q != 4u || p != 4u { fail(); }
    if first_over(2u) != 3u { fail(); }
    var n = 0u;
    loop {
        n = n + 1u;
        if n == 2u { continue; }
        if n >= 4u { break; }
    }
    if n != 4u { fail(); }
    switch wg.x {
        case 0u: { atomicMax(&m[0], 2u); }
        default: { atomicMax(&m[1], 3u); }
    }
    let old = atomicAdd(&c, 1u);
    if old > 1u { fail(); }
}
