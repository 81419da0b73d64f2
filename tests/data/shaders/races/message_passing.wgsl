// Workgroup 0 writes `data` plainly, then raises `flag`; workgroup 1
// waits for `flag`, then reads `data`. WGSL's atomics are all relaxed and
// no barrier orders two workgroups: the plain read of `data` races with
// the plain write, so the launch line names it (line 22); the verdicts
// are sequential consistency's. `flag` is atomic: no race. Workgroup 1
// may spin before workgroup 0 ever runs: F under OBE and unfair, P where
// workgroup 0 gets to run (HSA: the lowest unfinished one).
// expect OBE: F;
// expect HSA: P;
// expect unfair: F;
@group(0) @binding(0) var<storage, read_write> data: u32;
@group(0) @binding(1) var<storage, read_write> flag: atomic<u32>;
@group(0) @binding(2) var<storage, read_write> seen: u32;

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {
  if (wid.x == 0u) {
    data = 1u;
    atomicStore(&flag, 1u);
  } else {
    while (atomicLoad(&flag) == 0u) {}
    seen = data;
  }
}
