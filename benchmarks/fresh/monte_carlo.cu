// Monte Carlo kernels drawing with cuRAND's device API, written for the seventh held-out
// batch (session 30): each thread seeds its own generator (its subsequence is its index),
// then draws ``trials`` times.
#include <curand_kernel.h>

// pi from points in the unit square, XORWOW (curand_init skips ahead through cuRAND's
// tables of precomputed matrices: a table read per set bit of the subsequence)
__global__ void pi_xorwow(unsigned long long seed, int trials, unsigned int *hits)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandState state;
    curand_init(seed, id, 0, &state);
    unsigned int inside = 0;
    for (int i = 0; i < trials; i++) {
        float x = curand_uniform(&state), y = curand_uniform(&state);
        inside += x * x + y * y <= 1.0f;
    }
    hits[id] = inside;
}

// the same with Philox4x32-10, four draws a call (arithmetic only: no tables)
__global__ void pi_philox(unsigned long long seed, int trials, unsigned int *hits)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandStatePhilox4_32_10_t state;
    curand_init(seed, id, 0, &state);
    unsigned int inside = 0;
    for (int i = 0; i < trials; i++) {
        float4 v = curand_uniform4(&state);
        inside += (v.x * v.x + v.y * v.y <= 1.0f) + (v.z * v.z + v.w * v.w <= 1.0f);
    }
    hits[id] = inside;
}

// pi with MRG32k3a (double-precision arithmetic in its recurrence)
__global__ void pi_mrg(unsigned long long seed, int trials, unsigned int *hits)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandStateMRG32k3a state;
    curand_init(seed, id, 0, &state);
    unsigned int inside = 0;
    for (int i = 0; i < trials; i++) {
        float x = curand_uniform(&state), y = curand_uniform(&state);
        inside += x * x + y * y <= 1.0f;
    }
    hits[id] = inside;
}

// the mean payoff of a European call under geometric Brownian motion, normal draws by
// Box-Muller from Philox (curand_normal4: logarithm, square root, sine and cosine)
__global__ void call_payoff(unsigned long long seed, int trials, float spot, float strike,
                            float drift, float vol, float *payoff)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandStatePhilox4_32_10_t state;
    curand_init(seed, id, 0, &state);
    float sum = 0.0f;
    for (int i = 0; i < trials; i++) {
        float4 z = curand_normal4(&state);
        sum += fmaxf(spot * __expf(drift + vol * z.x) - strike, 0.0f)
             + fmaxf(spot * __expf(drift + vol * z.y) - strike, 0.0f)
             + fmaxf(spot * __expf(drift + vol * z.z) - strike, 0.0f)
             + fmaxf(spot * __expf(drift + vol * z.w) - strike, 0.0f);
    }
    payoff[id] = sum / (4 * trials);
}
