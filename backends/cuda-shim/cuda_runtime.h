// A CPU emulation of the small part of the CUDA runtime that the programs of
// `backends emit --target cuda` use, so their host harness and kernels can
// be compiled with g++ and run on a machine without a GPU:
//   g++ -std=c++17 -O2 -pthread -x c++ -I cuda-shim tests.cu -x none -o tests
//
// It is for testing the harness, not for measuring anything. The emulated
// device has AXB_SHIM_SMS (default 2) block slots: a launch runs its blocks
// in linear id order, each to completion, at most that many at once, which
// is the occupancy-bound, non-preemptive scheduler of paper 6.1 in
// miniature; a cooperative launch runs every block at once. Threads of a
// block run as OS threads. Kernels must have the signature of the emitted
// ones: (unsigned int*, volatile unsigned int*, unsigned int, unsigned int).
#ifndef AXB_CUDA_RUNTIME_SHIM
#define AXB_CUDA_RUNTIME_SHIM

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#define __global__
#define __host__
#define __device__

struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 blockIdx(0, 0, 0);
inline thread_local dim3 threadIdx(0, 0, 0);

inline unsigned int atomicExch(unsigned int* p, unsigned int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorNotReady = 600, cudaErrorCooperativeLaunchTooLarge = 720 };
inline const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    }
    return "unknown error";
}
inline cudaError_t& axb_shim_last_error() {
    static cudaError_t e = cudaSuccess;
    return e;
}
inline cudaError_t axb_shim_fail(cudaError_t e) { return axb_shim_last_error() = e; }
inline cudaError_t cudaGetLastError() {
    cudaError_t e = axb_shim_last_error();
    axb_shim_last_error() = cudaSuccess;
    return e;
}

inline unsigned axb_shim_slots() {
    const char* s = std::getenv("AXB_SHIM_SMS");
    int n = s ? std::atoi(s) : 2;
    return n > 0 ? (unsigned)n : 2u;
}

struct cudaDeviceProp {
    char name[256];
    int major, minor, multiProcessorCount, maxBlocksPerMultiProcessor, warpSize, cooperativeLaunch;
};
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
    std::memset(p, 0, sizeof *p);
    std::strcpy(p->name, "CPU emulation (cuda-shim)");
    p->major = 0;
    p->minor = 0;
    p->multiProcessorCount = (int)axb_shim_slots();
    p->maxBlocksPerMultiProcessor = 1;
    p->warpSize = 32;
    p->cooperativeLaunch = 1;
    return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int* v) { *v = 0; return cudaSuccess; }
inline cudaError_t cudaRuntimeGetVersion(int* v) { *v = 0; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : axb_shim_fail(cudaErrorInvalidValue); }
enum { cudaDeviceScheduleYield = 2, cudaDeviceMapHost = 8, cudaHostAllocDefault = 0, cudaHostAllocMapped = 2, cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
inline cudaError_t cudaSetDeviceFlags(unsigned int) { return cudaSuccess; }
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void*, int, size_t) {
    *n = 1;
    return cudaSuccess;
}

inline cudaError_t cudaMalloc(void** p, size_t n) {
    *p = std::calloc(n ? n : 1, 1);
    return *p ? cudaSuccess : axb_shim_fail(cudaErrorInvalidValue);
}
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned int) { return cudaMalloc(p, n); }
inline cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
// AXB_SHIM_STOP_WORD=0 or 1: the kernels see a word of their own holding
// that value instead of the host's stop flag: a flag that never arrives, or
// a device that leaves every loop at once (to test the canary).
inline cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned int) {
    static unsigned int word = 0;
    const char* w = std::getenv("AXB_SHIM_STOP_WORD");
    if (w != nullptr && (std::strcmp(w, "0") == 0 || std::strcmp(w, "1") == 0)) {
        word = (unsigned int)(w[0] - '0');
        *d = &word;
        return cudaSuccess;
    }
    *d = h;
    return cudaSuccess;
}

// One launch in flight on a stream; `done` is set when its last block ends.
struct AxbShimLaunch {
    std::atomic<bool> done{false};
};
struct AxbShimStream {
    std::shared_ptr<AxbShimLaunch> last;
};
struct AxbShimEvent {
    std::shared_ptr<AxbShimLaunch> launch;
};
typedef AxbShimStream* cudaStream_t;
typedef AxbShimEvent* cudaEvent_t;

inline void axb_shim_wait(const std::shared_ptr<AxbShimLaunch>& l) {
    while (l && !l->done.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { *s = new AxbShimStream(); return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) { axb_shim_wait(s->last); return cudaSuccess; }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) { axb_shim_wait(s->last); delete s; return cudaSuccess; }
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { *e = new AxbShimEvent(); return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { e->launch = s->last; return cudaSuccess; }
inline cudaError_t cudaEventQuery(cudaEvent_t e) {
    return !e->launch || e->launch->done.load() ? cudaSuccess : cudaErrorNotReady;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { axb_shim_wait(e->launch); return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s) {
    axb_shim_wait(s->last);  // stream order
    std::memset(p, v, n);
    return cudaSuccess;
}

// A copy on a stream: after the stream's launches, as the copy engine
// would; the stop flag's copies go on a stream of their own, so they land
// while a kernel on another stream runs.
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind, cudaStream_t s) {
    axb_shim_wait(s->last);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::memcpy(dst, src, n);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return cudaSuccess;
}

typedef void (*AxbShimKernel)(unsigned int*, volatile unsigned int*, unsigned int, unsigned int);

// Runs the grid on `slots` OS threads taking blocks in id order, then
// marks the launch done.
inline cudaError_t axb_shim_launch(const void* f, dim3 grid, dim3 block, void** args, cudaStream_t s, unsigned slots) {
    axb_shim_wait(s->last);
    AxbShimKernel k = (AxbShimKernel)f;
    unsigned int* mem = *(unsigned int**)args[0];
    volatile unsigned int* stop = *(unsigned int**)args[1];
    const unsigned int layout = *(unsigned int*)args[2];
    const unsigned int m = *(unsigned int*)args[3];
    auto launch = std::make_shared<AxbShimLaunch>();
    s->last = launch;
    std::thread([=] {
        std::atomic<unsigned> next{0};
        std::vector<std::thread> sms;
        for (unsigned sm = 0; sm < slots && sm < grid.x; sm++) {
            sms.emplace_back([&] {
                for (unsigned b; (b = next.fetch_add(1)) < grid.x;) {
                    std::vector<std::thread> lanes;
                    for (unsigned t = 0; t < block.x; t++) {
                        lanes.emplace_back([=] {
                            blockIdx = dim3(b);
                            threadIdx = dim3(t);
                            k(mem, stop, layout, m);
                        });
                    }
                    for (std::thread& l : lanes) l.join();
                }
            });
        }
        for (std::thread& t : sms) t.join();
        launch->done.store(true);
    }).detach();
    return cudaSuccess;
}
inline cudaError_t cudaLaunchKernel(const void* f, dim3 grid, dim3 block, void** args, size_t, cudaStream_t s) {
    return axb_shim_launch(f, grid, block, args, s, axb_shim_slots());
}
inline cudaError_t cudaLaunchCooperativeKernel(const void* f, dim3 grid, dim3 block, void** args, size_t, cudaStream_t s) {
    if (grid.x > axb_shim_slots()) return axb_shim_fail(cudaErrorCooperativeLaunchTooLarge);
    return axb_shim_launch(f, grid, block, args, s, grid.x);
}

#endif
