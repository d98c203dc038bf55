// nbody_ilp: NB_PER_THREAD bodies per thread share every broadcast load of the tile.
constexpr int NB_TILE = 256, NB_PER_THREAD = 2;

__global__ void __launch_bounds__(NB_TILE)
nbody_ilp(const float4 *__restrict__ body, float4 *__restrict__ acc, int n, float eps2)
{
    __shared__ float4 tile[NB_TILE];
    int first = blockIdx.x * NB_TILE * NB_PER_THREAD + threadIdx.x;
    float4 bi[NB_PER_THREAD];
    float ax[NB_PER_THREAD], ay[NB_PER_THREAD], az[NB_PER_THREAD];
#pragma unroll
    for (int p = 0; p < NB_PER_THREAD; ++p) {
        int i = first + p * NB_TILE;
        bi[p] = i < n ? body[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        ax[p] = ay[p] = az[p] = 0.0f;
    }
    for (int start = 0; start < n; start += NB_TILE) {
        int j = start + threadIdx.x;
        tile[threadIdx.x] = j < n ? body[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 16
        for (int k = 0; k < NB_TILE; ++k) {
            float4 bj = tile[k];
#pragma unroll
            for (int p = 0; p < NB_PER_THREAD; ++p) {
                float dx = bj.x - bi[p].x, dy = bj.y - bi[p].y, dz = bj.z - bi[p].z;
                float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
                float inv = rsqrtf(r2);
                float s = bj.w * inv * inv * inv;
                ax[p] = fmaf(s, dx, ax[p]);
                ay[p] = fmaf(s, dy, ay[p]);
                az[p] = fmaf(s, dz, az[p]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int p = 0; p < NB_PER_THREAD; ++p) {
        int i = first + p * NB_TILE;
        if (i < n) acc[i] = make_float4(ax[p], ay[p], az[p], 0.0f);
    }
}
