// Message passing between workgroups, with roles from the workgroup id read
// through workgroup memory after a barrier (the mp-groupid idiom of
// suites/idioms, written as WGSL): invocation 0 of each workgroup publishes
// its workgroup id in workgroup memory, everyone meets at a barrier, then
// invocation 0 of workgroup 0 raises a flag and invocation 0 of every
// other workgroup waits for it.
//
// Expected verdicts (`oracle classify --workgroup-size 2
// suites/shaders/message_passing.wgsl`; the attribute says 2 already):
// - HSA: P. Workgroup 0, the producer, is the lowest-numbered one, which
//   HSA always guarantees: it raises the flag.
// - OBE: F. A consumer may start first and spin; OBE guarantees only
//   started workgroups, and the producer may never start.
// - WEAK_FAIR: P.
//
// expect WEAK_FAIR: P;
// expect OBE: F;
// expect HSA: P;
// expect HSA, subgroup=unfair: P;

@group(0) @binding(0) var<storage, read_write> flag: atomic<u32>;
var<workgroup> gid: u32;

// The role of this workgroup: 0 produces, anything else consumes.
fn role(id: u32) -> u32 {
    switch id {
        case 0u: { return 0u; }
        default: { return 1u; }
    }
}

@compute @workgroup_size(2)
fn main(@builtin(workgroup_id) wg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        gid = wg.x;
    }
    workgroupBarrier();
    let g = gid;
    if lid != 0u {
        return;
    }
    if role(g) == 0u {
        atomicStore(&flag, 1u);
    } else {
        loop {
            if atomicLoad(&flag) != 0u { break; }
            continuing {
                // nothing: spin
            }
        }
    }
}
