// Two compute entry points, two dispatches: each is decided on its own,
// as `two_entries.publish` and `two_entries.wait` (without --entry).
// `publish` only stores: P under every model. In `wait`, workgroup 0
// spins until workgroup 1 stores: F where workgroup 1 may never be
// scheduled once workgroup 0 runs (HSA, OBE, HSA+OBE, LOBE: none
// guarantees a workgroup with a higher id that has not started), P under
// fair scheduling.
@group(0) @binding(0) var<storage, read_write> flag: atomic<u32>;

@compute @workgroup_size(1)
fn publish() {
    atomicStore(&flag, 1u);
}

@compute @workgroup_size(1)
fn wait(@builtin(workgroup_id) wg: vec3<u32>) {
    if (wg.x == 0u) {
        loop {
            if (atomicLoad(&flag) == 1u) {
                break;
            }
        }
    } else {
        atomicStore(&flag, 1u);
    }
}
