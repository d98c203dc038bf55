// reduce8 / read_ceiling candidates: LOADS_IN_FLIGHT int4 loads per thread per iteration.
#define LOADS_IN_FLIGHT 8

__device__ int warp_sum(int v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

__global__ void reduce8(const int *__restrict__ g_in, int *__restrict__ g_out, unsigned int n)
{
    const int4 *in4 = (const int4 *)g_in;
    unsigned int n4 = n / 4;
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int stride = gridDim.x * blockDim.x;
    int sum = 0;
    unsigned int i = t;
    for (; i + (LOADS_IN_FLIGHT - 1) * stride < n4; i += LOADS_IN_FLIGHT * stride) {
        int4 v[LOADS_IN_FLIGHT];
#pragma unroll
        for (int u = 0; u < LOADS_IN_FLIGHT; u++) v[u] = in4[i + u * stride];
#pragma unroll
        for (int u = 0; u < LOADS_IN_FLIGHT; u++) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < n4; i += stride) {
        int4 v = in4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    if (t < n - 4 * n4) sum += g_in[4 * n4 + t];

    __shared__ int warp_sums[32];
    unsigned int lane = threadIdx.x % 32;
    unsigned int warp = threadIdx.x / 32;
    sum = warp_sum(sum);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = (lane < blockDim.x / 32) ? warp_sums[lane] : 0;
        sum = warp_sum(sum);
        if (lane == 0) atomicAdd(g_out, sum);
    }
}

__global__ void read_ceiling(const int *__restrict__ g_in, int *__restrict__ g_out, unsigned int n)
{
    const int4 *in4 = (const int4 *)g_in;
    unsigned int n4 = n / 4;
    unsigned int stride = gridDim.x * blockDim.x;
    int acc = 0;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (LOADS_IN_FLIGHT - 1) * stride < n4; i += LOADS_IN_FLIGHT * stride) {
        int4 v[LOADS_IN_FLIGHT];
#pragma unroll
        for (int u = 0; u < LOADS_IN_FLIGHT; u++) v[u] = in4[i + u * stride];
#pragma unroll
        for (int u = 0; u < LOADS_IN_FLIGHT; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n4; i += stride) {
        int4 v = in4[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) g_out[0] = acc;
}
