// What compute-sanitizer's racecheck says about warp-synchronous reductions on the H100.
// Built and run on the device machine by tests/emu/gpu/racecheck.sh; the emulator's
// RaceError for the same code (tests/emu/test_checks.py) follows this reference.
#include <cstdio>

__device__ void tail_volatile(volatile float* s, int t) {
    s[t] += s[t + 32];
    s[t] += s[t + 16];
    s[t] += s[t + 8];
}

__device__ void tail_syncwarp(float* s, int t) {
    for (int k = 32; k >= 8; k >>= 1) {
        float v = s[t] + s[t + k];
        __syncwarp();
        s[t] = v;
        __syncwarp();
    }
}

__global__ void reduce_volatile(const float* in, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 32) tail_volatile(s, t);
    if (t == 0) out[0] = s[0];
}

__global__ void reduce_syncwarp(const float* in, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (t < 32) tail_syncwarp(s, t);
    if (t == 0) out[1] = s[0];
}

int main() {
    float *in, *out;
    cudaMalloc(&in, 64 * sizeof(float));
    cudaMalloc(&out, 2 * sizeof(float));
    cudaMemset(in, 0, 64 * sizeof(float));
    reduce_volatile<<<1, 64>>>(in, out);
    cudaDeviceSynchronize();
    printf("--- reduce_syncwarp ---\n");
    fflush(stdout);
    reduce_syncwarp<<<1, 64>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}
