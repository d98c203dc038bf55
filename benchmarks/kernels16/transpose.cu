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

// transpose_wa: writes whole 32-byte sectors at every shape. A block owns TILE_C input columns
// (output rows); in output row c it writes the run of WA_ROWS output columns that starts at
// r0 - s_c, s_c = (c * rows) % 8, so every run starts on a sector of the output (the runs of
// the blocks above and below share that shift: they tile the row). Its tile holds the input
// rows r0 - 8 .. r0 + WA_ROWS (r0 .. r0 + WA_ROWS when rows % 8 == 0). Grid:
// (ceil(cols / TILE_C), ceil((rows + 7) / WA_ROWS)).
#define WA_ROWS 64
#define WA_COLS 64
#define WA_THREADS 512

__global__ void __launch_bounds__(WA_THREADS)
transpose_wa(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[WA_ROWS + 8][WA_COLS + 1];
    const int up = (rows & 7) ? 8 : 0;
    const int r0 = blockIdx.y * WA_ROWS, c0 = blockIdx.x * WA_COLS;
#pragma unroll 4
    for (int e = threadIdx.x; e < (WA_ROWS + up) * WA_COLS; e += WA_THREADS) {
        int i = e / WA_COLS, j = e % WA_COLS;
        int r = r0 - up + i, c = c0 + j;
        if (r >= 0 && r < rows && c < cols) tile[i][j] = in[(size_t)r * cols + c];
    }
    __syncthreads();
#pragma unroll 4
    for (int e = threadIdx.x; e < WA_COLS * WA_ROWS; e += WA_THREADS) {
        int j = e / WA_ROWS, k = e % WA_ROWS;
        int c = c0 + j;
        int s = ((c & 7) * (rows & 7)) & 7;
        int r = r0 - s + k;
        if (r >= 0 && r < rows && c < cols) out[(size_t)c * rows + r] = tile[up - s + k][j];
    }
}

// transpose_ra: the mirror of transpose_wa, reading whole sectors at every shape. A block owns
// RA_ROWS input rows; in input row r it reads the run of RA_COLS columns that starts at
// c0 - t_r, t_r = (r * cols) % 8; its tile holds input columns c0 - 8 .. c0 + RA_COLS, and it
// writes, per output row, the elements it read (runs with sawtooth ends). Grid:
// (ceil((cols + 7) / RA_COLS), ceil(rows / RA_ROWS)).
#define RA_ROWS 64
#define RA_COLS 64
#define RA_THREADS 512

__global__ void __launch_bounds__(RA_THREADS)
transpose_ra(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[RA_ROWS][RA_COLS + 9];
    const int left = (cols & 7) ? 8 : 0;
    const int r0 = blockIdx.y * RA_ROWS, c0 = blockIdx.x * RA_COLS;
#pragma unroll 4
    for (int e = threadIdx.x; e < RA_ROWS * RA_COLS; e += RA_THREADS) {
        int i = e / RA_COLS, k = e % RA_COLS;
        int r = r0 + i;
        int t = ((r & 7) * (cols & 7)) & 7;
        int c = c0 - t + k;
        if (r < rows && c >= 0 && c < cols) tile[i][left - t + k] = in[(size_t)r * cols + c];
    }
    __syncthreads();
#pragma unroll 4
    for (int e = threadIdx.x; e < (RA_COLS + left) * RA_ROWS; e += RA_THREADS) {
        int j = e / RA_ROWS, i = e % RA_ROWS;
        int r = r0 + i, c = c0 - left + j;
        int kk = c - c0 + (((r & 7) * (cols & 7)) & 7);
        if (r < rows && c >= 0 && c < cols && kk >= 0 && kk < RA_COLS)
            out[(size_t)c * rows + r] = tile[i][j];
    }
}
