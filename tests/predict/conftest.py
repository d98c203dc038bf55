"""Kernels for the prediction tests: each one's counts follow from its source alone."""

from __future__ import annotations

SOURCE = r"""
__global__ void fma_loop(const float *a, float *b, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i];
#pragma unroll 16
    for (int j = 0; j < k; j++) x = fmaf(x, 1.0001f, 0.5f);
    b[i] = x;
}
__global__ void fma_half(float *b, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i;
    if (threadIdx.x < 32 || (threadIdx.x >= 64 && threadIdx.x % 2 == 1)) {  // warp 1 idle
        for (int j = 0; j < k; j++) x = fmaf(x, 1.0001f, 0.5f);
    }
    if (threadIdx.x < 64) b[i] = x;
}
__global__ void sines(float *b, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i;
    for (int j = 0; j < k; j++) x = __sinf(x);
    b[i] = x;
}
__global__ void rolled_sines(float *b, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i;
#pragma unroll 1
    for (int j = 0; j < k; j++) x = __sinf(x);
    b[i] = x;
}
__global__ void barriers(float *b, int k) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = t;
    for (int j = 0; j < k; j++) {
        __syncthreads();
        float v = s[(t + 1) % 256];
        __syncthreads();
        s[t] += v;
    }
    __syncthreads();
    b[blockIdx.x * 256 + t] = s[t];
}
__global__ void four_loads(const float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float p = a[i], q = a[i + n], r = a[i + 2 * n], s = a[i + 3 * n];
    b[i] = p + q + r + s;
}
__global__ void many_loads(const float *a, float *b, int n) {  // 24 independent loads
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 24; k++) s += a[i + k * n];
    b[i] = s;
}
__global__ void chain(const int *next, int *out, int steps) {
    int p = threadIdx.x;
    for (int k = 0; k < steps; k++) p = next[p];
    out[threadIdx.x] = p;
}
__global__ void grow(float *x, float growth, float limit) {  // no counter: a while on a value
    float v = x[threadIdx.x];
    while (v < limit) v = v * growth + 1.0f;
    x[threadIdx.x] = v;
}
__global__ void count_keys(const int *key, unsigned *counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[key[i]], 1u);
}
__global__ void gather(const float *src, const int *index, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = src[index[i]];
}
__global__ void band(float *out, int k, int update) {  // rows 20..27 work 20 times longer
    float x = threadIdx.x;
    int trips = blockIdx.y >= 20 && blockIdx.y < 28 ? 20 * k : k;
#pragma unroll 1
    for (int j = 0; j < trips; j++) x = fmaf(x, 1.0001f, 0.5f);
    float *o = out + (blockIdx.y * gridDim.x + blockIdx.x) * 32 + threadIdx.x;
    *o = update ? *o + x : x;  // update: in place, a block run twice reads what it wrote
}
__global__ void half_last_row(float *out) {  // the grid's last row of blocks stores half
    float *o = out + (size_t)(blockIdx.y * gridDim.x + blockIdx.x) * 64;
    o[threadIdx.x] = 1.0f;
    if (blockIdx.y + 1 < gridDim.y) o[32 + threadIdx.x] = 2.0f;
}
__global__ void copy(const float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}
__global__ void stencil(const float *u, float *v, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1)
        v[y * nx + x] = 0.5f * u[y * nx + x] + 0.125f * (u[y * nx + x - 1] + u[y * nx + x + 1]
                        + u[(y - 1) * nx + x] + u[(y + 1) * nx + x]);
}
__global__ void stencil3d(const float *u, float *v, int n) {  // 7 points, a block per tile
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1) return;
    size_t i = ((size_t)z * n + y) * n + x, p = (size_t)n * n;
    v[i] = u[i - 1] + u[i + 1] + u[i - n] + u[i + n] + u[i - p] + u[i + p] - 6.0f * u[i];
}
__global__ void grid_sum(const float *a, float *out, int n) {
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += a[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void saxpy_stride(float a, const float *x, float *y, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = a * x[i] + y[i];
}
__global__ void atomic_sum(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, a[i]);
}
__global__ void guarded_tile(const float *a, float *out, int n) {
    __shared__ float t[4][128];
    int i = threadIdx.x;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        float v = 0.0f;
        if (i + k * 128 < n) v = a[i + k * 128];
        t[k][i] = v;
    }
    __syncthreads();
    out[i] = t[0][i] + t[1][(i + 1) % 128] + t[2][i] + t[3][i];
}
__global__ void div_chain(const float *a, float *b, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i];
    for (int j = 0; j < k; j++) x = 1.5f / x;   // IEEE division: each needs the previous
    b[i] = x;
}
__global__ void modulo(unsigned *a, unsigned b) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = a[i] % b;
}
__global__ void uneven(const int *next, int *out) {
    int p = threadIdx.x;
    int steps = threadIdx.x < 32 ? 3 : 1;  // warp 0 waits three times, the others once
    for (int k = 0; k < steps; k++) p = next[p];
    out[blockIdx.x * blockDim.x + threadIdx.x] = p;
}
__global__ void block_paths(const int *next, int *out, int steps) {
    int p = threadIdx.x, q = p;
    // block 0 chases `steps` pointers and leaves the line below with its last load pending
    for (int k = 0; k < (blockIdx.x == 0 ? steps : 0); k++) q = next[q];
    out[blockIdx.x * blockDim.x + p] = next[(p + q) % 64];
}
__global__ void increment(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0f;
}
__global__ void mixed_waits(const float *a, float *b) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = (float)t;
    __syncthreads();
    float g = a[t];            // a global load in flight
    float h = s[127 - t];      // a shared load
    float u = h + 1.0f;        // waits for the shared load only
    b[t] = u * u + g;          // the global load is still on its way: a wait of its own
}
__device__ float4 four_at(const float *p, int row, int col, int rows, int cols) {
    if (row < rows && cols % 4 == 0 && col + 3 < cols)  // aligned and inside: one load
        return *(const float4 *)&p[row * cols + col];
    float v[4];                                       // else four guarded ones
    for (int j = 0; j < 4; j++)
        v[j] = (row < rows && col + j < cols) ? p[row * cols + col + j] : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}
__global__ void split_paths(const float *a, float *out, int cols, int rows) {
    int t = threadIdx.x;  // with cols = 100, lanes 0-24 take the first path, 25-31 the second
    float s = 0.0f;
    for (int k = 0; k < rows; k++) {
        float4 v = four_at(a, k, 4 * t, rows, cols);
        s += v.x + v.y + v.z + v.w;
    }
    out[t] = s;
}
__global__ void guarded_pair(const int *a, int *out, unsigned n) {
    unsigned i = blockIdx.x * 64 + threadIdx.x;  // Harris's reduce6: two loads a trip
    int sum = 0;
    while (i < n) {
        sum += a[i];
        if (i + 32 < n) sum += a[i + 32];  // a guarded block: predicated code in SASS
        i += 64 * gridDim.x;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
__global__ void four_chains(const float *a, float *b, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i], y = a[i + 32];
    float c0 = 0.f, c1 = 1.f, c2 = 2.f, c3 = 3.f;
    for (int j = 0; j < k; j++) {  // each chain's four steps written one after the other
        c0 = fmaf(c0, x, y); c0 = fmaf(c0, x, y); c0 = fmaf(c0, x, y); c0 = fmaf(c0, x, y);
        c1 = fmaf(c1, x, y); c1 = fmaf(c1, x, y); c1 = fmaf(c1, x, y); c1 = fmaf(c1, x, y);
        c2 = fmaf(c2, x, y); c2 = fmaf(c2, x, y); c2 = fmaf(c2, x, y); c2 = fmaf(c2, x, y);
        c3 = fmaf(c3, x, y); c3 = fmaf(c3, x, y); c3 = fmaf(c3, x, y); c3 = fmaf(c3, x, y);
    }
    b[i] = c0 + c1 + c2 + c3;
}
__global__ void two_loops(const float *a, float *b, int k1, int k2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i];
#pragma unroll 16
    for (int j = 0; j < k1; j++) x = fmaf(x, 1.0001f, 0.5f);
    float y = x;
#pragma unroll 16
    for (int j = 0; j < k2; j++) y = fmaf(y, 0.9999f, 0.25f);
    b[i] = y;
}
__global__ void row_passes(const float *x, float *y, int n) {  // a thread per row, two passes
    const float *row = x + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * n;
    float *out = y + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * n;
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += row[j];
    for (int j = 0; j < n; j++) out[j] = row[j] * s;
}
__global__ void triangle(float *out, int n) {  // row i sums i + 1 terms: the rows grow
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float s = 0.0f;
#pragma unroll 1
        for (int j = 0; j <= i; j++) s += j;
        out[i] = s;
    }
}
__global__ void astray(const int *a, int *out, int n) {  // right only if the first loop ends
    int s = 0;
    for (int j = 0; j < n; j++) s += a[j];
    out[(s - n) * 1024] = 1;  // out of bounds when the first loop is cut short (s < n)
    for (int k = 0; k < n; k++) out[k] += a[k];
}
__global__ void row_back(const float *a, float *b, float *c, int n) {  // b's row written, read
    float *row = b + (size_t)blockIdx.x * n;
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) row[j] = 2.0f * a[(size_t)blockIdx.x * n + j];
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += blockDim.x) s += row[n - 1 - j];
    c[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void row_twice(const float *a, float *b, int n) {  // a block per row, read twice
    const float *row = a + (size_t)blockIdx.x * n;
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) s += row[j];
    for (int j = threadIdx.x; j < n; j += blockDim.x) b[(size_t)blockIdx.x * n + j] = row[j] * s;
}
"""
