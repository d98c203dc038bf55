// Kernels of benchmarks/shape_probe.py: what makes a launch slower than the bytes it moves,
// taken apart. Lab 11's copy and transpose_padded are here unchanged; the others each keep
// one part of them (the barrier, or the transposed addresses) and drop the rest, or take the
// tiles in another order (*_panels).
#define TILE 32
#define BLOCK_ROWS 8

__global__ void copy(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) out[(y + j) * cols + x] = in[(y + j) * cols + x];
    }
}

__global__ void transpose_padded(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

// the copy, through a shared tile with a barrier between loads and stores (no transpose)
__global__ void copy_through_tile(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    }
    __syncthreads();
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) out[(y + j) * cols + x] = tile[threadIdx.y + j][threadIdx.x];
    }
}

// transpose_padded's global addresses without its tile and barrier: each thread stores the
// values it loaded where transpose_padded's thread stores (the result is not a transpose)
__global__ void transpose_addresses(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    float v[TILE / BLOCK_ROWS];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        v[j / BLOCK_ROWS] = (x < cols && y + j < rows) ? in[(y + j) * cols + x] : 0.0f;
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = v[j / BLOCK_ROWS];
    }
}

// One block per row of `cols` floats: `passes` passes over the row, each reading it with eight
// loads in flight per thread and ending in a block-wide maximum (warp shuffles, then shared
// memory behind a barrier); with `write`, the last pass also writes the row (x - max).
// The shape of llm.c's block-per-row softmax kernels without their arithmetic.
__global__ void row_passes(float *out, const float *in, int cols, int passes, int write)
{
    __shared__ float partial[32];
    const float *x = in + (size_t)blockIdx.x * cols;
    float *y = out + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int p = 0; p < passes; p++) {
        float local = -INFINITY;
        for (int i = threadIdx.x; i < cols; i += blockDim.x * 8) {
            float v[8];
#pragma unroll
            for (int u = 0; u < 8; u++) v[u] = x[min(cols - 1, i + u * (int)blockDim.x)];
#pragma unroll
            for (int u = 0; u < 8; u++) {
                local = fmaxf(local, v[u]);
                if (write && p == passes - 1 && i + u * (int)blockDim.x < cols)
                    y[i + u * blockDim.x] = v[u] - m;
            }
        }
        for (int s = 16; s > 0; s /= 2) local = fmaxf(local, __shfl_xor_sync(0xffffffff, local, s));
        if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = local;
        __syncthreads();
        if (threadIdx.x < 32) {
            local = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : -INFINITY;
            for (int s = 16; s > 0; s /= 2) local = fmaxf(local, __shfl_xor_sync(0xffffffff, local, s));
            if (threadIdx.x == 0) partial[0] = local;
        }
        __syncthreads();
        m = partial[0];
        __syncthreads();
    }
    if (threadIdx.x == 0 && !write) y[0] = m;
}

// a contiguous copy of n floats, one float4 per thread (the reference rate of the run)
__global__ void copy_vec4(const float4 *__restrict__ in, float4 *__restrict__ out, long n4)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

// The 32 x 32 tiles of a rows x cols matrix in panels of `panel` rows of tiles, each panel
// column by column: in a 1-D grid, the tile to the right of a block's tile is `panel` blocks
// later and the one below it is the next block's (panel = 1: the order of the 2-D grid, row
// of tiles after row of tiles).
__device__ void panel_tile(int panel, int rows, int cols, int *tx, int *ty)
{
    int tiles_x = (cols + TILE - 1) / TILE, tiles_y = (rows + TILE - 1) / TILE;
    int p = blockIdx.x / (panel * tiles_x), within = blockIdx.x % (panel * tiles_x);
    int height = min(panel, tiles_y - p * panel);  // the last panel may be lower
    *tx = within / height;
    *ty = p * panel + within % height;
}

// copy's addresses, the tiles taken in panels
__global__ void copy_panels(const float *__restrict__ in, float *__restrict__ out, int rows, int cols, int panel)
{
    int tx, ty;
    panel_tile(panel, rows, cols, &tx, &ty);
    int x = tx * TILE + threadIdx.x;
    int y = ty * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) out[(y + j) * cols + x] = in[(y + j) * cols + x];
    }
}

// transpose_padded, the tiles taken in panels: the tile written to the right of a block's
// output tile is the next block's when panel > 1
__global__ void transpose_panels(const float *__restrict__ in, float *__restrict__ out, int rows, int cols, int panel)
{
    __shared__ float tile[TILE][TILE + 1];
    int tx, ty;
    panel_tile(panel, rows, cols, &tx, &ty);
    int x = tx * TILE + threadIdx.x;
    int y = ty * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    }
    __syncthreads();
    x = ty * TILE + threadIdx.x;
    y = tx * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

// copy_through_tile, the tiles taken in panels
__global__ void copy_through_tile_panels(const float *__restrict__ in, float *__restrict__ out, int rows, int cols, int panel)
{
    __shared__ float tile[TILE][TILE + 1];
    int tx, ty;
    panel_tile(panel, rows, cols, &tx, &ty);
    int x = tx * TILE + threadIdx.x;
    int y = ty * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    }
    __syncthreads();
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) out[(y + j) * cols + x] = tile[threadIdx.y + j][threadIdx.x];
    }
}

// A contiguous copy of n floats written `offset` floats into `out` (1: every warp's 128 bytes
// leave two sectors in part, finished by the warp beside), one float per thread, no loop
__global__ void stream_once(const float *__restrict__ in, float *__restrict__ out, int n, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i + offset] = in[i];
}

// the same copy by a grid-stride loop (132 x 8 blocks of 256 threads)
__global__ void stream_grid(const float *__restrict__ in, float *__restrict__ out, int n, int offset)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i + offset] = in[i];
}

// the same copy by a block per 4096-float chunk, each thread loading 8 floats (8 loads in
// flight) and then storing them, as a block-per-row kernel's write pass does
__global__ void stream_chunks(const float *__restrict__ in, float *__restrict__ out, int n, int offset)
{
    int base = blockIdx.x * 4096;
    for (int i = base + threadIdx.x; i < min(base + 4096, n); i += blockDim.x * 8) {
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) v[u] = in[min(n - 1, i + u * (int)blockDim.x)];
#pragma unroll
        for (int u = 0; u < 8; u++)
            if (i + u * (int)blockDim.x < min(base + 4096, n)) out[i + u * blockDim.x + offset] = v[u];
    }
}
