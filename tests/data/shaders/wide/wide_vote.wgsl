// A vote in a workgroup of 8 with no loop: its result depends on which
// lanes share a subgroup (on a GPU of 8 lanes or more, lane 0 votes with
// lanes 1 to 7; with subgroups of 4, with 1 to 3), so no default width
// stands for the GPUs', and the shader is refused until one is named
// (issue 42, docs/KERNEL.md §10.1).
enable subgroups;
@group(0) @binding(0) var<storage, read_write> n: atomic<u32>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) lid: u32) {
  if subgroupAny(lid == 7u) { atomicAdd(&n, 1u); }
}
