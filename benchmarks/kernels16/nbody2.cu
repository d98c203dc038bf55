// Issue 16, N-body: why does the issue rate stay near 80 %? One kernel, nbody_v, whose
// #define knobs (rewritten by sweep16.variant) give every candidate; the same interaction
// as lab 20's nbody_unrolled. Bodies are float4 (x, y, z, mass); padding bodies have mass 0.
#define NB_T 256        // threads per block = bodies per tile
#define NB_P 1          // bodies per thread (NB_P * NB_T per block)
#define NB_MINB 1       // second __launch_bounds__ argument (minimum resident blocks per SM)
#define NB_UNROLL 32    // unroll of the loop over the tile
#define NB_MODE 0       // 0: shared tile; 1: shared tile, next tile prefetched into registers;
                        // 2: no tile and no barrier, each body j read by __ldg (one address per warp)
#define NB_SCHAIN 0     // 0: s = m*inv*inv*inv (3 dependent FMULs after the MUFU); 1: (m*inv)*(inv*inv)
#define NB_DIAG 0       // 1: rsqrtf replaced by an FMUL -- timing only, the forces are wrong
#define NB_SPLIT 0      // 1: blockIdx.y takes a share of the j range, partial forces are atomically
                        // added (acc must be zero before the launch)

constexpr int NB_UNROLL_N = NB_UNROLL;

__device__ __forceinline__ void nb_pair(float4 bj, float4 bi, float &ax, float &ay, float &az,
                                        float eps2)
{
    float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
    float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
#if NB_DIAG
    float inv = r2 * 0.37f;
#else
    float inv = rsqrtf(r2);
#endif
#if NB_SCHAIN
    float s = (bj.w * inv) * (inv * inv);
#else
    float s = bj.w * inv * inv * inv;
#endif
    ax = fmaf(s, dx, ax);
    ay = fmaf(s, dy, ay);
    az = fmaf(s, dz, az);
}

__global__ void __launch_bounds__(NB_T, NB_MINB)
nbody_v(const float4 *__restrict__ body, float4 *__restrict__ acc, int n, float eps2)
{
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    int first = blockIdx.x * NB_T * NB_P + threadIdx.x;
    float4 bi[NB_P];
    float ax[NB_P], ay[NB_P], az[NB_P];
#pragma unroll
    for (int p = 0; p < NB_P; ++p) {
        int i = first + p * NB_T;
        bi[p] = i < n ? body[i] : zero;
        ax[p] = ay[p] = az[p] = 0.0f;
    }
    int jbeg = 0, jend = n;
#if NB_SPLIT
    int chunk = (n + gridDim.y - 1) / gridDim.y;
    jbeg = min(n, (int)blockIdx.y * chunk);
    jend = min(n, jbeg + chunk);
#endif
#if NB_MODE == 2
#pragma unroll NB_UNROLL_N
    for (int j = jbeg; j < jend; ++j) {
        float4 bj = __ldg(body + j);
#pragma unroll
        for (int p = 0; p < NB_P; ++p)
            nb_pair(bj, bi[p], ax[p], ay[p], az[p], eps2);
    }
#else
    __shared__ float4 tile[NB_T];
#if NB_MODE == 1
    float4 next = jbeg + (int)threadIdx.x < jend ? body[jbeg + threadIdx.x] : zero;
#endif
    for (int start = jbeg; start < jend; start += NB_T) {
#if NB_MODE == 1
        tile[threadIdx.x] = next;
        __syncthreads();
        int j = start + NB_T + threadIdx.x;   // the next tile's load is in flight during this one
        next = j < jend ? body[j] : zero;
#else
        int j = start + threadIdx.x;
        tile[threadIdx.x] = j < jend ? body[j] : zero;
        __syncthreads();
#endif
#pragma unroll NB_UNROLL_N
        for (int k = 0; k < NB_T; ++k) {
            float4 bj = tile[k];
#pragma unroll
            for (int p = 0; p < NB_P; ++p)
                nb_pair(bj, bi[p], ax[p], ay[p], az[p], eps2);
        }
        __syncthreads();
    }
#endif
#pragma unroll
    for (int p = 0; p < NB_P; ++p) {
        int i = first + p * NB_T;
        if (i < n) {
#if NB_SPLIT
            atomicAdd(&acc[i].x, ax[p]);
            atomicAdd(&acc[i].y, ay[p]);
            atomicAdd(&acc[i].z, az[p]);
#else
            acc[i] = make_float4(ax[p], ay[p], az[p], 0.0f);
#endif
        }
    }
}
