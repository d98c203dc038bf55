// Kernels of the eleventh held-out batch (session 34), written for it in the shapes an
// introductory course writes: each predicted before the GPU timed it.

// 256-bin histogram of bytes, private to each block in shared memory, merged at the end
__global__ void histogram_private(const unsigned char *bytes, unsigned *bins, int n)
{
    __shared__ unsigned local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[bytes[i]], 1u);
    __syncthreads();
    if (local[threadIdx.x]) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

// a 5x5 filter held in constant memory over a float image, zero outside it
__constant__ float taps[25] = {1, 4, 6, 4, 1, 4, 16, 24, 16, 4, 6, 24, 36, 24, 6,
                               4, 16, 24, 16, 4, 1, 4, 6, 4, 1};

__global__ void conv5_constant(const float *in, float *out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) {
            const int u = x + dx, v = y + dy;
            if (u >= 0 && u < width && v >= 0 && v < height)
                sum += taps[(dy + 2) * 5 + dx + 2] * in[v * width + u];
        }
    out[y * width + x] = sum / 256.0f;
}

// the same filter with the block's tile and its 2-pixel rim staged in shared memory
#define TILE 16
__global__ void conv5_tiled(const float *in, float *out, int width, int height)
{
    __shared__ float tile[TILE + 4][TILE + 4];
    const int x0 = blockIdx.x * TILE - 2, y0 = blockIdx.y * TILE - 2;
    for (int k = threadIdx.y * TILE + threadIdx.x; k < (TILE + 4) * (TILE + 4); k += TILE * TILE) {
        const int u = x0 + k % (TILE + 4), v = y0 + k / (TILE + 4);
        tile[k / (TILE + 4)][k % (TILE + 4)] =
            u >= 0 && u < width && v >= 0 && v < height ? in[v * width + u] : 0.0f;
    }
    __syncthreads();
    const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = 0; dy < 5; ++dy)
        for (int dx = 0; dx < 5; ++dx)
            sum += taps[dy * 5 + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];
    out[y * width + x] = sum / 256.0f;
}

// inclusive scan of each block's 1024 ints by Hillis and Steele, two buffers in shared memory
__global__ void scan_hillis_steele(const int *in, int *out)
{
    __shared__ int buffer[2][1024];
    const int t = threadIdx.x, i = blockIdx.x * 1024 + t;
    int from = 0;
    buffer[0][t] = in[i];
    __syncthreads();
    for (int d = 1; d < 1024; d *= 2) {
        buffer[1 - from][t] = t >= d ? buffer[from][t] + buffer[from][t - d] : buffer[from][t];
        from = 1 - from;
        __syncthreads();
    }
    out[i] = buffer[from][t];
}

// dot product: a grid-stride sum per thread, a warp's sum by shuffles, one atomic per warp
__global__ void dot_shuffle(const float *a, const float *b, float *result, int n)
{
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += a[i] * b[i];
    for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d);
    if (threadIdx.x % 32 == 0) atomicAdd(result, sum);
}

// grey levels of interleaved 8-bit RGB pixels (three bytes a pixel)
__global__ void rgb_to_grey(const unsigned char *rgb, unsigned char *grey, int pixels)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pixels) return;
    const float r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    grey[i] = (unsigned char)(0.299f * r + 0.587f * g + 0.114f * b + 0.5f);
}

// one explicit Euler step of particles stored as an array of structures (24 bytes each)
struct Particle {
    float x, y, z, vx, vy, vz;
};

__global__ void particles_step(Particle *p, int n, float dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle q = p[i];
    q.vz -= 9.81f * dt;
    q.x += q.vx * dt;
    q.y += q.vy * dt;
    q.z += q.vz * dt;
    if (q.z < 0.0f) {
        q.z = -q.z;
        q.vz = -0.9f * q.vz;
    }
    p[i] = q;
}

// one generation of Conway's game of life on a torus of bytes (0 or 1)
__global__ void life_step(const unsigned char *now, unsigned char *next, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int alive = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            if (dx || dy)
                alive += now[((y + dy + height) % height) * width + (x + dx + width) % width];
    const unsigned char self = now[y * width + x];
    next[y * width + x] = alive == 3 || (alive == 2 && self);
}

// steps of the Collatz sequence from each start to 1: a loop as long as its data says
__global__ void collatz_steps(const unsigned *start, unsigned *steps, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long v = start[i];
    unsigned count = 0;
    while (v > 1) {
        v = v & 1 ? 3 * v + 1 : v / 2;
        ++count;
    }
    steps[i] = count;
}

// per block, how many of its keys have each value of the 4-bit digit at `shift`
__global__ void digit_counts(const unsigned *keys, unsigned *counts, int n, int shift)
{
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    const int per_block = blockDim.x * 16;
    for (int k = 0; k < 16; ++k) {
        const int i = blockIdx.x * per_block + k * blockDim.x + threadIdx.x;
        if (i < n) atomicAdd(&local[(keys[i] >> shift) & 15], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 16) counts[blockIdx.x * 16 + threadIdx.x] = local[threadIdx.x];
}

// y = A x with a thread per row of a row-major matrix (the lanes read rows apart)
__global__ void matvec_rows(const float *a, const float *x, float *y, int rows, int cols)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c) sum += a[(size_t)r * cols + c] * x[c];
    y[r] = sum;
}

// row sums of 32x32 tiles, a lane per row of an unpadded shared tile (32-way bank conflicts)
__global__ void tile_row_sums(const float *a, float *sums, int cols)
{
    __shared__ float tile[32][32];
    const int x = blockIdx.x * 32 + threadIdx.x;
    for (int r = threadIdx.y; r < 32; r += blockDim.y)
        tile[r][threadIdx.x] = a[(size_t)(blockIdx.y * 32 + r) * cols + x];
    __syncthreads();
    if (threadIdx.y == 0) {
        float sum = 0.0f;
        for (int r = 0; r < 32; ++r) sum += tile[threadIdx.x][r];  // lanes 32 words apart
        sums[(size_t)blockIdx.y * cols + blockIdx.x * 32 + threadIdx.x] = sum;
    }
}

// an integer hash of each key, 16 rounds of multiply, xor and rotate
__global__ void hash_rounds(const unsigned *keys, unsigned *hashes, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = keys[i] ^ 0x9e3779b9u;
    for (int r = 0; r < 16; ++r) {
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h = (h << 7) | (h >> 25);
        h += 0xc2b2ae35u * (unsigned)r;
    }
    hashes[i] = h;
}

// saxpy in a grid-stride loop over few blocks: two warps a scheduler
__global__ void saxpy_few_blocks(float a, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}
