// SPDX-License-Identifier: MIT
// Reduction kernels of the cuda memory kind: dst[i] = a[i] op b[i], for bf16, fp16, fp32, fp64
// and sum, prod, min, max. Built by nvcc into a fatbin (sm_80, sm_90, sm_100) that colltune
// embeds as data and loads at run time through libcuda (cuModuleLoadData): the colltune binary
// does not link CUDA. 16-bit types compute in float and round once, as the host kernels do.
// Names: ct_reduce_<op>_<dtype> (extern "C", so the names in the module are these).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <typename T> struct Cvt {
    static __device__ T in(T v) { return v; }
    static __device__ T out(T v) { return v; }
};
template <> struct Cvt<__half> {
    static __device__ float in(__half v) { return __half2float(v); }
    static __device__ __half out(float v) { return __float2half_rn(v); }
};
template <> struct Cvt<__nv_bfloat16> {
    static __device__ float in(__nv_bfloat16 v) { return __bfloat162float(v); }
    static __device__ __nv_bfloat16 out(float v) { return __float2bfloat16_rn(v); }
};

struct Sum { template <typename U> __device__ U operator()(U a, U b) const { return a + b; } };
struct Prod { template <typename U> __device__ U operator()(U a, U b) const { return a * b; } };
struct Min { template <typename U> __device__ U operator()(U a, U b) const { return b < a ? b : a; } };
struct Max { template <typename U> __device__ U operator()(U a, U b) const { return b > a ? b : a; } };

template <typename T, typename Op>
__device__ void reduce(T *dst, const T *a, const T *b, unsigned long long n)
{
    Op op;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = Cvt<T>::out(op(Cvt<T>::in(a[i]), Cvt<T>::in(b[i])));
}

#define KERNEL(opname, Op, tname, T)                                                            \
    extern "C" __global__ void ct_reduce_##opname##_##tname(T *dst, const T *a, const T *b,    \
                                                          unsigned long long n)                 \
    {                                                                                           \
        reduce<T, Op>(dst, a, b, n);                                                            \
    }
#define KERNELS(tname, T)                                                                       \
    KERNEL(sum, Sum, tname, T) KERNEL(prod, Prod, tname, T) KERNEL(min, Min, tname, T)          \
    KERNEL(max, Max, tname, T)

KERNELS(bfloat16, __nv_bfloat16)
KERNELS(float16, __half)
KERNELS(float32, float)
KERNELS(float64, double)
