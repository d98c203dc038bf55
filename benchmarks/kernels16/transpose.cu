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
