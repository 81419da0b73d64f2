#version 430
#pragma scheduler(HSA)
// Our own shader, written in the form of the TLA+ forward-progress
// project's GLSL (ArberSephirotheca/gpu-forward-progress-TLAPlus): GLSL
// 4.30, `volatile` and `coherent` blocks, a block instance named like its
// member, and the launch in `layout(tla_...)` and `#pragma scheduler`
// lines. Workgroup 0 raises `flag`; workgroup 1 waits for it; both
// count. HSA always runs the lowest-numbered workgroup still running
// (workgroup 0 first): P. OBE runs only workgroups that have started, and
// workgroup 1 may start and spin before workgroup 0 ever starts: F. LOBE
// also runs every lower-numbered one once one has started: P. Fair: P.
// expect HSA: P;
// expect OBE: F;
// expect LOBE: P;
// expect fair: P;

layout(set = 0, binding = 0) volatile buffer FLAG {
	uint flag;
} flag;

layout(set = 0, binding = 1) coherent buffer COUNTER {
	uint counter;
} counter;

layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(tla_subgroup_size = 1) in;
layout(tla_num_workgroups = 2) in;

void main()
{
	uint gid_x = gl_GlobalInvocationID.x;
	if (gid_x == 0) {
		atomicExchange(flag.flag, 1);
	}
	if (gid_x == 1) {
		while (atomicAdd(flag.flag, 0) == 0) { }
	}
	atomicAdd(counter.counter, 1);
}
