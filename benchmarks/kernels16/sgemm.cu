// sgemm: BM x BN block tile, TM x 8 results per thread, BK deep, two shared buffers,
// warps laid out as 8 x 4 threads, split-K over gridDim.z (atomicAdd when split).
#define BM 128
#define BN 128
#define BK 16
#define MIN_BLOCKS 2
#define TM 8
#define A_PAD 4
#define TX (BN / 8)
#define TY (BM / TM)
#define THREADS (TX * TY)
#define A_LOADS (BM * BK / 4 / THREADS)
#define B_LOADS (BK * BN / 4 / THREADS)

// four neighbours p[row][col .. col+3] of a matrix with `pitch` floats per row; elements
// outside rows x cols read as 0. One 16-byte load where the four are inside and aligned.
__device__ float4 load4(const float *p, int pitch, int row, int col, int rows, int cols)
{
    if (row < rows && col + 3 < cols && pitch % 4 == 0)
        return *(const float4 *)&p[(size_t)row * pitch + col];
    float v[4];
    for (int j = 0; j < 4; j++)
        v[j] = (row < rows && col + j < cols) ? p[(size_t)row * pitch + col + j] : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
      int M, int N, int K)
{
    __shared__ __align__(16) float As[2][BK][BM + A_PAD];
    __shared__ __align__(16) float Bs[2][BK][BN];
    int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int tx = (warp % (TX / 8)) * 8 + lane % 8;
    int ty = (warp / (TX / 8)) * 4 + lane / 8;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int chunk = (K + gridDim.z * BK - 1) / (gridDim.z * BK) * BK;
    int kbeg = blockIdx.z * chunk, kend = min(K, kbeg + chunk);
    float4 a4[A_LOADS], b4[B_LOADS];
#pragma unroll
    for (int l = 0; l < A_LOADS; l++) {
        int e = t + l * THREADS, am = e / (BK / 4), ak = e % (BK / 4) * 4;
        a4[l] = load4(A, K, row0 + am, kbeg + ak, M, kend);
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; l++) {
        int e = t + l * THREADS, bk = e / (BN / 4), bn = e % (BN / 4) * 4;
        b4[l] = load4(B, N, kbeg + bk, col0 + bn, kend, N);
    }
    float acc[TM][8] = {};
    int buf = 0;
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
#pragma unroll
        for (int l = 0; l < A_LOADS; l++) {
            int e = t + l * THREADS, am = e / (BK / 4), ak = e % (BK / 4) * 4;
            As[buf][ak + 0][am] = a4[l].x;
            As[buf][ak + 1][am] = a4[l].y;
            As[buf][ak + 2][am] = a4[l].z;
            As[buf][ak + 3][am] = a4[l].w;
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; l++) {
            int e = t + l * THREADS, bk = e / (BN / 4), bn = e % (BN / 4) * 4;
            *(float4 *)&Bs[buf][bk][bn] = b4[l];
        }
        __syncthreads();
        if (k0 + BK < kend) {
#pragma unroll
            for (int l = 0; l < A_LOADS; l++) {
                int e = t + l * THREADS, am = e / (BK / 4), ak = e % (BK / 4) * 4;
                a4[l] = load4(A, K, row0 + am, k0 + BK + ak, M, kend);
            }
#pragma unroll
            for (int l = 0; l < B_LOADS; l++) {
                int e = t + l * THREADS, bk = e / (BN / 4), bn = e % (BN / 4) * 4;
                b4[l] = load4(B, N, k0 + BK + bk, col0 + bn, kend, N);
            }
        }
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float av[TM], bv[8];
#pragma unroll
            for (int g = 0; g < TM / 4; g++) {
                float4 a = *(const float4 *)&As[buf][k][g * (BM / (TM / 4)) + ty * 4];
                av[4 * g] = a.x; av[4 * g + 1] = a.y; av[4 * g + 2] = a.z; av[4 * g + 3] = a.w;
            }
            float4 b0 = *(const float4 *)&Bs[buf][k][tx * 4];
            float4 b1 = *(const float4 *)&Bs[buf][k][BN / 2 + tx * 4];
            bv[0] = b0.x; bv[1] = b0.y; bv[2] = b0.z; bv[3] = b0.w;
            bv[4] = b1.x; bv[5] = b1.y; bv[6] = b1.z; bv[7] = b1.w;
#pragma unroll
            for (int i = 0; i < TM; i++) {
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] += av[i] * bv[j];
            }
        }
        buf = 1 - buf;
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int row = row0 + (i / 4) * (BM / (TM / 4)) + ty * 4 + i % 4;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int col = col0 + h * (BN / 2) + tx * 4;
            if (row >= M) continue;
            if (gridDim.z == 1 && N % 4 == 0 && col + 3 < N) {
                *(float4 *)&C[(size_t)row * N + col] = make_float4(acc[i][4 * h], acc[i][4 * h + 1],
                                                                   acc[i][4 * h + 2], acc[i][4 * h + 3]);
                continue;
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (col + j >= N) continue;
                if (gridDim.z == 1) C[(size_t)row * N + col + j] = acc[i][4 * h + j];
                else atomicAdd(&C[(size_t)row * N + col + j], acc[i][4 * h + j]);
            }
        }
    }
}
