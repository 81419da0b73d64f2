// Declarations of the CUDA device functions and runtime calls a kernel
// program's .cu file uses beyond backends/cuda-shim, so that g++
// -fsyntax-only can check the file where nvcc is missing (tests only:
// nothing here runs).
#pragma once
#include <cuda_runtime.h>
#define __shared__ static
void __syncthreads();
unsigned int atomicSub(unsigned int*, unsigned int);
unsigned int atomicAnd(unsigned int*, unsigned int);
unsigned int atomicOr(unsigned int*, unsigned int);
unsigned int atomicXor(unsigned int*, unsigned int);
unsigned int atomicMin(unsigned int*, unsigned int);
unsigned int atomicMax(unsigned int*, unsigned int);
unsigned int atomicCAS(unsigned int*, unsigned int, unsigned int);
unsigned int __activemask();
int __all_sync(unsigned int, int);
int __any_sync(unsigned int, int);
unsigned int __shfl_sync(unsigned int, unsigned int, int);
int __ffs(unsigned int);
// cudaMemcpyKind comes from the shim (the AXB programs copy the stop flag).
cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t cudaMemset(void*, int, size_t);
cudaError_t cudaStreamQuery(int);
cudaError_t cudaDeviceSynchronize();
unsigned int min(unsigned int, unsigned int);
