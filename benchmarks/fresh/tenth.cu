// Kernels of the tenth held-out batch (session 33), written for it in the shapes public code
// takes most often: each predicted before the GPU timed it.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;

__device__ float warp_max(float v)
{
    for (int d = 16; d > 0; d /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d));
    return v;
}

__device__ float warp_sum(float v)
{
    for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

// the block's value of `v` combined over its warps (max or sum), given to every thread
template <bool MAX>
__device__ float block_combine(float v, float *scratch)
{
    v = MAX ? warp_max(v) : warp_sum(v);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    __syncthreads();  // scratch may still be read from the previous call
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < warps ? scratch[lane] : (MAX ? -INFINITY : 0.0f);
    return MAX ? warp_max(v) : warp_sum(v);
}

// softmax of each row of `cols` floats, a block per row: its maximum, the sum of the
// exponentials, then the row written out (the row read three times)
__global__ void softmax_rows(const float *x, float *y, int cols)
{
    __shared__ float scratch[32];
    const float *row = x + (size_t)blockIdx.x * cols;
    float top = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) top = fmaxf(top, row[c]);
    top = block_combine<true>(top, scratch);
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(row[c] - top);
    const float scale = 1.0f / block_combine<false>(sum, scratch);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[(size_t)blockIdx.x * cols + c] = __expf(row[c] - top) * scale;
}

// layer normalisation of rows of 1024 floats, a warp per row held in registers as float4s
__global__ void layernorm_warp(const float4 *x, const float *gain, const float *bias, float4 *y,
                               int rows)
{
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;
    float4 v[8];
    float sum = 0.0f;
    for (int k = 0; k < 8; ++k) {
        v[k] = x[(size_t)row * 256 + k * 32 + lane];
        sum += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    const float mean = warp_sum(sum) / 1024.0f;
    float var = 0.0f;
    for (int k = 0; k < 8; ++k) {
        float a = v[k].x - mean, b = v[k].y - mean, c = v[k].z - mean, d = v[k].w - mean;
        var += a * a + b * b + c * c + d * d;
    }
    const float inv = rsqrtf(warp_sum(var) / 1024.0f + 1e-5f);
    for (int k = 0; k < 8; ++k) {
        const int col = (k * 32 + lane) * 4;
        y[(size_t)row * 256 + k * 32 + lane] = make_float4(
            (v[k].x - mean) * inv * gain[col] + bias[col],
            (v[k].y - mean) * inv * gain[col + 1] + bias[col + 1],
            (v[k].z - mean) * inv * gain[col + 2] + bias[col + 2],
            (v[k].w - mean) * inv * gain[col + 3] + bias[col + 3]);
    }
}

// Sobel gradient magnitude of an 8-bit image, a thread per pixel (the border left at 0)
__global__ void sobel_u8(const unsigned char *in, unsigned char *out, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[(size_t)y * w + x] = 0;
        return;
    }
    auto p = [&](int dx, int dy) { return (int)in[(size_t)(y + dy) * w + x + dx]; };
    const int gx = p(1, -1) + 2 * p(1, 0) + p(1, 1) - p(-1, -1) - 2 * p(-1, 0) - p(-1, 1);
    const int gy = p(-1, 1) + 2 * p(0, 1) + p(1, 1) - p(-1, -1) - 2 * p(0, -1) - p(1, -1);
    out[(size_t)y * w + x] = (unsigned char)min(255, (abs(gx) + abs(gy)) / 2);
}

// transpose of an n x n matrix of doubles through a padded 32 x 32 tile, blocks of 32 x 8
__global__ void transpose_f64(const double *in, double *out, int n)
{
    __shared__ double tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// dot product of two vectors of signed bytes packed four to a word, with __dp4a; a warp's
// sum added once to the total
__global__ void dot_int8(const int *a, const int *b, long long n_words, int *total)
{
    int sum = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n_words;
         i += (long long)gridDim.x * blockDim.x)
        sum = __dp4a(a[i], b[i], sum);
    for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
    if (threadIdx.x % 32 == 0) atomicAdd(total, sum);
}

// a histogram of values in [0, 1) into `bins` float bins of weights, by atomics in global
// memory
__global__ void weighted_bins(const float *value, const float *weight, float *bins, int n,
                              int nbins)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[min((int)(value[i] * nbins), nbins - 1)], weight[i]);
}

// one compare-and-swap step (stage k, distance j) of a bitonic sort over the whole array
__global__ void bitonic_step(float *a, int j, int k)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, partner = i ^ j;
    if (partner <= i) return;
    const float x = a[i], y = a[partner];
    const bool up = (i & k) == 0;
    if ((x > y) == up) {
        a[i] = y;
        a[partner] = x;
    }
}

// a 1-D stencil of radius 8 through shared memory with its halo
__global__ void stencil_1d(const float *in, float *out, const float *weights, int n)
{
    __shared__ float s[256 + 16];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x + 8] = in[i];
    if (threadIdx.x < 8) {
        s[threadIdx.x] = i >= 8 ? in[i - 8] : 0.0f;
        s[threadIdx.x + 256 + 8] = i + 256 < n ? in[i + 256] : 0.0f;
    }
    __syncthreads();
    float v = 0.0f;
    for (int k = -8; k <= 8; ++k) v += weights[k + 8] * s[threadIdx.x + 8 + k];
    out[i] = v;
}

// y = a x + y on half precision pairs
__global__ void haxpy(int n2, __half2 a, const __half2 *x, __half2 *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x)
        y[i] = __hfma2(a, x[i], y[i]);
}

// the sums of a row-major matrix's rows, a thread per row (neighbouring threads read
// addresses a row apart), and of its columns, a thread per column (they read side by side)
__global__ void row_sums(const float *m, float *out, int rows, int cols)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += m[(size_t)r * cols + c];
    out[r] = s;
}

__global__ void column_sums(const float *m, float *out, int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) s += m[(size_t)r * cols + c];
    out[c] = s;
}

// a sum by cooperative groups: each warp's tile reduced by cg::reduce, one atomic per warp
__global__ void sum_tiles(const float *x, float *total, int n)
{
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v += x[i];
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) atomicAdd(total, v);
}
