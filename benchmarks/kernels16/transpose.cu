// transpose candidates: TILE x TILE tiles, TILE x BLOCK_ROWS threads.
#define TILE 32
#define BLOCK_ROWS 8

__global__ void transpose_padded(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

__global__ void copy_tiled(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) out[(size_t)(y + j) * cols + x] = in[(size_t)(y + j) * cols + x];
    }
}

// a flat copy: one float4 per thread, the last n % 4 floats by the first threads
__global__ void copy_flat4(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    size_t n = (size_t)rows * cols, n4 = n / 4;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n4) ((float4 *)out)[i] = ((const float4 *)in)[i];
    if (i < n - 4 * n4) out[4 * n4 + i] = in[4 * n4 + i];
}

// transpose_rect: a TILE_R x TILE_C tile of the input (rows x columns), THREADS threads in a
// line; reads go along input rows of TILE_C floats, writes along output rows of TILE_R floats.
#define TILE_R 64
#define TILE_C 64
#define THREADS 512

__global__ void __launch_bounds__(THREADS)
transpose_rect(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE_R][TILE_C + 1];
    int t = threadIdx.x;
    int r0 = blockIdx.y * TILE_R, c0 = blockIdx.x * TILE_C;
#pragma unroll
    for (int e = t; e < TILE_R * TILE_C; e += THREADS) {
        int r = e / TILE_C, c = e % TILE_C;
        if (r0 + r < rows && c0 + c < cols) tile[r][c] = in[(size_t)(r0 + r) * cols + c0 + c];
    }
    __syncthreads();
#pragma unroll
    for (int e = t; e < TILE_R * TILE_C; e += THREADS) {
        int c = e / TILE_R, r = e % TILE_R;
        if (r0 + r < rows && c0 + c < cols) out[(size_t)(c0 + c) * rows + r0 + r] = tile[r][c];
    }
}
