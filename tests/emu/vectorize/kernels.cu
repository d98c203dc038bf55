// Shared-memory loads ptxas may merge into LDS.64 / LDS.128 (tests/emu/test_vectorize.py).
#define TILE 32

__global__ void tiled(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    float sum = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        As[ty][tx] = A[ty * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + tx];
        __syncthreads();
        for (int k = 0; k < TILE; k++) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[ty * TILE + tx] = sum;
}

__global__ void padded(const float *in, float *out)  // rows of 33 floats: 4-byte aligned
{
    __shared__ float s[32][33];
    s[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    float a = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; k++) a += s[threadIdx.y][k];
    out[threadIdx.y * 32 + threadIdx.x] = a;
}

__global__ void pairs(const float *in, float *out)  // rows of 34 floats: 8-byte aligned
{
    __shared__ float s[32][34];
    s[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    float a = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; k++) a += s[threadIdx.y][k];
    out[threadIdx.y * 32 + threadIdx.x] = a;
}

__global__ void dynamic(const float *in, float *out)
{
    extern __shared__ float s[];
    s[threadIdx.y * 32 + threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    float a = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; k++) a += s[threadIdx.y * 32 + k];
    out[threadIdx.y * 32 + threadIdx.x] = a;
}

__global__ void doubles(const double *in, double *out)
{
    __shared__ double s[32][32];
    s[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    double a = 0.0;
#pragma unroll
    for (int k = 0; k < 16; k++) a += s[threadIdx.y][k];
    out[threadIdx.y * 32 + threadIdx.x] = a;
}

__global__ void row_width(const float *in, float *out, int w)  // stride unknown to ptxas
{
    extern __shared__ float s[];
    s[threadIdx.y * w + threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    float a = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; k++) a += s[threadIdx.y * w + k];
    out[threadIdx.y * 32 + threadIdx.x] = a;
}

__global__ void per_thread(const float *in, float *out)
{
    __shared__ float s[1024];
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) s[k] = in[k];
    __syncthreads();
    float a = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) a += s[threadIdx.x * 4 + k];
    out[threadIdx.x] = a;
}

__global__ void store_between(const float *in, float *out)  // a store may alias: no merge
{
    __shared__ float s[32][34];
    s[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    float a = s[threadIdx.y][0];
    s[threadIdx.y][threadIdx.x + 2] = a;
    float b = s[threadIdx.y][1];
    out[threadIdx.y * 32 + threadIdx.x] = a + b;
}

__global__ void packed(const float *in, float *out)  // arrays under 16 bytes: b starts at 12
{
    __shared__ float a[3], b[3];
    if (threadIdx.x < 3 && threadIdx.y == 0) {
        a[threadIdx.x] = in[threadIdx.x];
        b[threadIdx.x] = in[3 + threadIdx.x];
    }
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = a[0] + b[0] * b[1];
}
