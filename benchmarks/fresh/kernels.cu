// The fifth held-out batch for issue 19: kernels written for it in session 16, of kinds the
// labs do not time (sparse rows, gathers, shared-memory histograms, one warp per row, a
// block scan, double precision, an escape-time loop, atomics on a few addresses). Their
// predictions were stored before the H100 timed them (benchmarks/peer_times.py --fifth).

// y = A x for a CSR matrix, one thread per row: neighbouring threads read rows far apart
__global__ void spmv_csr_thread(const int *row_start, const int *col, const float *val,
                                const float *x, float *y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float sum = 0.0f;
    for (int k = row_start[r]; k < row_start[r + 1]; k++) sum += val[k] * x[col[k]];
    y[r] = sum;
}

// the same product, one warp per row: the lanes read a row's entries side by side
__global__ void spmv_csr_warp(const int *row_start, const int *col, const float *val,
                              const float *x, float *y, int rows)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    float sum = 0.0f;
    for (int k = row_start[r] + lane; k < row_start[r + 1]; k += 32) sum += val[k] * x[col[k]];
    for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d);
    if (lane == 0) y[r] = sum;
}

// 256-bin histogram of bytes: each block counts in shared memory, then adds to the result
__global__ void histogram_bytes(const unsigned char *data, unsigned int *bins, size_t n)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

// 5 x 5 filter over a width x height image (edges clamped), the filter read through __ldg
__global__ void blur5(const float *in, const float *filter, float *out, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -2; dy <= 2; dy++) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -2; dx <= 2; dx++) {
            int xx = min(max(x + dx, 0), width - 1);
            sum += __ldg(&filter[(dy + 2) * 5 + dx + 2]) * in[yy * width + xx];
        }
    }
    out[y * width + x] = sum;
}

// y = A x, A row-major rows x cols (cols a multiple of 128): one warp per row, float4 loads
__global__ void gemv_warp(const float *a, const float *x, float *y, int rows, int cols)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float4 *row = (const float4 *)(a + (size_t)r * cols);
    const float4 *x4 = (const float4 *)x;
    float sum = 0.0f;
    for (int k = lane; k < cols / 4; k += 32) {
        float4 p = row[k], q = x4[k];
        sum += p.x * q.x + p.y * q.y + p.z * q.z + p.w * q.w;
    }
    for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d);
    if (lane == 0) y[r] = sum;
}

// y = A^T x with A row-major rows x cols: one thread per column, so a warp reads a row's
// neighbouring columns at each step (coalesced), walking down all the rows
__global__ void gemv_transposed(const float *a, const float *x, float *y, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float sum = 0.0f;
    for (int r = 0; r < rows; r++) sum += a[(size_t)r * cols + c] * x[r];
    y[c] = sum;
}

// exclusive scan of each block's 2 * blockDim.x elements (up-sweep and down-sweep in
// shared memory, no padding: the deep levels put many lanes on one bank)
__global__ void scan_blocks(const int *in, int *out)
{
    extern __shared__ int s[];
    int t = threadIdx.x, m = 2 * blockDim.x;
    const int *src = in + (size_t)blockIdx.x * m;
    s[t] = src[t];
    s[t + blockDim.x] = src[t + blockDim.x];
    int step = 1;
    for (int d = m / 2; d > 0; d /= 2, step *= 2) {
        __syncthreads();
        if (t < d) s[step * (2 * t + 2) - 1] += s[step * (2 * t + 1) - 1];
    }
    if (t == 0) s[m - 1] = 0;
    for (int d = 1; d < m; d *= 2) {
        step /= 2;
        __syncthreads();
        if (t < d) {
            int i = step * (2 * t + 1) - 1, j = step * (2 * t + 2) - 1;
            int v = s[i];
            s[i] = s[j];
            s[j] += v;
        }
    }
    __syncthreads();
    int *dst = out + (size_t)blockIdx.x * m;
    dst[t] = s[t];
    dst[t + blockDim.x] = s[t + blockDim.x];
}

// out[i] = in[index[i]] for a random permutation: every load touches its own sector
__global__ void gather(const float *in, const int *index, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[index[i]];
}

// y = a x + y in double precision, a grid-stride loop
__global__ void daxpy(double a, const double *x, double *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

// escape times of the Mandelbrot set on a width x height grid over [-2, 1] x [-1.5, 1.5]
__global__ void mandelbrot(int *steps, int width, int height, int limit)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height) return;
    float cr = -2.0f + 3.0f * px / width, ci = -1.5f + 3.0f * py / height;
    float zr = 0.0f, zi = 0.0f;
    int k = 0;
    while (k < limit && zr * zr + zi * zi < 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        k++;
    }
    steps[py * width + px] = k;
}

// sums of values by key into a few bins with global atomics (keys in 0 .. bins - 1)
__global__ void sum_by_key(const int *key, const float *value, float *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&sums[key[i]], value[i]);
}
