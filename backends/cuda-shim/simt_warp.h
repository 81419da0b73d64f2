// A CPU emulation of the warp-level part of CUDA that the SIMT form of
// `backends emit` (docs/KERNEL.md §2.10) uses, so that its .cu files run on
// a machine without a GPU:
//   g++ -std=c++17 -O2 -pthread -x c++ -I cuda-shim -include cuda-shim/simt_warp.h FILE.cu -x none -o FILE
//
// What it is: every thread of every block is an OS thread, all started
// together, so lanes are independent threads: no lockstep, no
// reconvergence, memory accesses interleave as the OS schedules them.
// `__activemask()` is the warp's lanes that have not returned; the *_sync
// collectives are a rendezvous of the lanes of their mask that have not
// returned (any call site, as Volta's independent thread scheduling
// allows), each getting the values of all. So it shows what independent
// threads with rendezvous collectives do: it can show outcomes only SSO
// allows (a store of one lane between two of another's), never one of a
// lane running ahead of a collective. It says nothing of a GPU.
#ifndef AXB_SIMT_WARP_SHIM
#define AXB_SIMT_WARP_SHIM
#define AXB_SIMT_CPU_WARPS 1

#include <cuda_runtime.h>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

// cudaMemcpyKind comes from cuda_runtime.h (the shim).
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
    std::memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int v, size_t n) {
    std::memset(p, v, n);
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline unsigned int atomicSub(unsigned int* p, unsigned int v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicAnd(unsigned int* p, unsigned int v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicOr(unsigned int* p, unsigned int v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicXor(unsigned int* p, unsigned int v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicCAS(unsigned int* p, unsigned int cmp, unsigned int v) {
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
inline unsigned int atomicMin(unsigned int* p, unsigned int v) {
    unsigned int o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (o > v && !__atomic_compare_exchange_n(p, &o, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return o;
}
inline unsigned int atomicMax(unsigned int* p, unsigned int v) {
    unsigned int o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (o < v && !__atomic_compare_exchange_n(p, &o, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return o;
}
inline int __ffs(unsigned int x) { return __builtin_ffs((int)x); }
inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }

// One warp: which lanes still run, and the collective being gathered.
struct AxbWarp {
    std::mutex m;
    std::condition_variable cv;
    unsigned alive = 0xffffffffu;
    unsigned arrived = 0, mask = 0, gen = 0, set = 0, readers = 0;
    unsigned vals[32] = {}, snap[32] = {};
};
inline thread_local AxbWarp* axb_warp = nullptr;
inline thread_local unsigned axb_lane = 0;

// Completes the gathered collective when every lane of its mask still
// running has arrived (lock held).
inline void axb_publish(AxbWarp& w) {
    if (w.arrived != 0 && (w.alive & w.mask & ~w.arrived) == 0) {
        for (int i = 0; i < 32; i++) w.snap[i] = w.vals[i];
        w.set = w.arrived;
        w.readers = (unsigned)__builtin_popcount(w.arrived);
        w.arrived = 0;
        w.gen++;
        w.cv.notify_all();
    }
}

// The rendezvous: deposits `v`, waits for the others, returns the lanes
// that took part and their values in `snap`.
inline unsigned axb_collect(unsigned mask, unsigned v, unsigned* snap) {
    AxbWarp& w = *axb_warp;
    std::unique_lock<std::mutex> g(w.m);
    w.cv.wait(g, [&] { return w.readers == 0; });
    if (w.arrived == 0) w.mask = mask;
    unsigned gen = w.gen;
    w.vals[axb_lane] = v;
    w.arrived |= 1u << axb_lane;
    axb_publish(w);
    w.cv.wait(g, [&] { return w.gen != gen; });
    for (int i = 0; i < 32; i++) snap[i] = w.snap[i];
    unsigned set = w.set;
    if (--w.readers == 0) w.cv.notify_all();
    return set;
}

inline unsigned int __activemask() {
    std::lock_guard<std::mutex> g(axb_warp->m);
    return axb_warp->alive;
}
inline int __all_sync(unsigned int mask, int p) {
    unsigned snap[32];
    unsigned set = axb_collect(mask, p != 0, snap);
    for (int i = 0; i < 32; i++)
        if ((set >> i & 1u) && !snap[i]) return 0;
    return 1;
}
inline int __any_sync(unsigned int mask, int p) {
    unsigned snap[32];
    unsigned set = axb_collect(mask, p != 0, snap);
    for (int i = 0; i < 32; i++)
        if ((set >> i & 1u) && snap[i]) return 1;
    return 0;
}
inline unsigned int __shfl_sync(unsigned int mask, unsigned int v, int src) {
    unsigned snap[32];
    unsigned set = axb_collect(mask, v, snap);
    return (src >= 0 && src < 32 && (set >> src & 1u)) ? snap[src] : v;
}

// One launch, run to its end: every thread of every block at once.
typedef void (*AxbSimtKernel)(unsigned int*, unsigned int*, unsigned int*);
inline void axb_simt_cpu_launch(AxbSimtKernel k, unsigned grid, unsigned block, unsigned int* mem,
                                unsigned int* regs, unsigned int* ends) {
    unsigned nwarps = (block + 31) / 32;
    std::vector<AxbWarp> warps(grid * nwarps);
    std::vector<std::thread> threads;
    for (unsigned b = 0; b < grid; b++) {
        for (unsigned t = 0; t < block; t++) {
            AxbWarp* w = &warps[b * nwarps + t / 32];
            if (t % 32 == 0) {
                unsigned lanes = block - t < 32 ? block - t : 32;
                w->alive = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
            }
            threads.emplace_back([=] {
                blockIdx = dim3(b);
                threadIdx = dim3(t);
                axb_warp = w;
                axb_lane = t % 32;
                k(mem, regs, ends);
                std::lock_guard<std::mutex> g(w->m);
                w->alive &= ~(1u << axb_lane);
                axb_publish(*w);
            });
        }
    }
    for (std::thread& t : threads) t.join();
}
#endif
