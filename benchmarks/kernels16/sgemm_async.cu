// sgemm_async: sgemm's BM x BN block tile and TM x 8 results per thread, but the tiles reach
// shared memory by cp.async (global -> shared, no registers in between) through a ring of
// STAGES buffers, one __syncthreads per BK step. cp.async cannot transpose, so A's tile keeps
// its rows (BM rows of BK floats, AK = BK + A_PAD apart) and a thread owns rows ty, ty + TY,
// ty + 2 TY, ...: the four ty of a warp read four neighbouring rows, 16 bytes each, in distinct
// banks. A thread takes 4 k at a time: one float4 of A per row, two float4 of B per k.
// Rows whose starts are not 16-byte aligned (K or N not a multiple of 4) take 4-byte copies;
// elements outside the matrices are written as zeros by ordinary stores. Split-K over
// gridDim.z as in sgemm (atomicAdd into a zeroed C when split). SYNC_MID 1 moves the
// barrier to the middle of a step, so that a step's first shared loads overlap the FMAs of
// the step before (needs STAGES >= 3); SYNC_MID 0 keeps it at the start of each step.
// FAST 1 gives the blocks that lie wholly inside A, B and C, with a whole number of BK steps
// and 16-byte copies, a loop of their own without the per-copy bounds checks and zero fill:
// only the edge blocks pay for them.
#define BM 256
#define BN 128
#define BK 8
#define TM 16
#define STAGES 3
#define A_PAD 0
#define MIN_BLOCKS 1
#define SYNC_MID 1
#define GROUP 0  /* > 0: blocks run in groups of GROUP tile rows, column by column (L2 reuse) */
#define FAST 1
#define TX (BN / 8)
#define TY (BM / TM)
#define THREADS (TX * TY)
#define AK (BK + A_PAD)
#define A_VECS (BM * BK / 4 / THREADS)
#define B_VECS (BK * BN / 4 / THREADS)

static_assert(BM * BK / 4 % THREADS == 0 && BK * BN / 4 % THREADS == 0, "tiles split evenly");
// row and column of element t + l * THREADS of a tile W elements wide (W divides THREADS or
// THREADS divides W), written so that only t is a variable
#define ROW(l, W) (THREADS % (W) == 0 ? t / (W) + (l) * (THREADS / (W)) : (l) * THREADS / (W))
#define COL(l, W) (THREADS % (W) == 0 ? t % (W) : t + (l) * THREADS % (W))

static_assert(BK % 4 == 0 && AK % 4 == 0 && TX % 8 == 0 && STAGES >= 2, "tile shape");
static_assert(!SYNC_MID || (STAGES >= 3 && BK % 8 == 0), "a barrier mid-step needs 3 buffers");

__device__ __forceinline__ void copy16(float *dst, const float *src)
{
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

__device__ __forceinline__ void copy4(float *dst, const float *src)
{
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}

// one BK step of a block wholly inside A and B: a and b point at this thread's first float4 of
// the step (l = 0), the others lie whole rows of A or B further; zero: a step past the end
__device__ __forceinline__ void load_inside(float *as, float *bs, const float *a, const float *b,
                                            int N, int K, int t, bool zero)
{
    static_assert(THREADS % (BN / 4) == 0 && THREADS % (BK / 4) == 0, "rows per copy round");
    if (zero) {  // the same for the whole block: a branch, not a predicate
#pragma unroll
        for (int l = 0; l < A_VECS; l++)
            *(float4 *)&as[ROW(l, BK / 4) * AK + COL(l, BK / 4) * 4] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int l = 0; l < B_VECS; l++)
            *(float4 *)&bs[ROW(l, BN / 4) * BN + COL(l, BN / 4) * 4] = make_float4(0.f, 0.f, 0.f, 0.f);
        return;
    }
#pragma unroll
    for (int l = 0; l < A_VECS; l++)
        copy16(&as[ROW(l, BK / 4) * AK + COL(l, BK / 4) * 4], a + (size_t)(l * (THREADS / (BK / 4))) * K);
#pragma unroll
    for (int l = 0; l < B_VECS; l++)
        copy16(&bs[ROW(l, BN / 4) * BN + COL(l, BN / 4) * 4], b + (size_t)(l * (THREADS / (BN / 4))) * N);
}

// one BK step: A[row0 .., k0 ..] into as, B[k0 .., col0 ..] into bs; zeros past M, N, kend
__device__ __forceinline__ void load_tile(float *as, float *bs, const float *A, const float *B,
                                          int M, int N, int K, int row0, int col0, int k0,
                                          int kend, int t, bool vec)
{
    if (vec) {
#pragma unroll
        for (int l = 0; l < A_VECS; l++) {
            int am = ROW(l, BK / 4), ak = COL(l, BK / 4) * 4;
            int r = row0 + am, k = k0 + ak;
            float *d = &as[am * AK + ak];
            if (r < M && k < kend) copy16(d, &A[(size_t)r * K + k]);
            else *(float4 *)d = make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int l = 0; l < B_VECS; l++) {
            int bk = ROW(l, BN / 4), bn = COL(l, BN / 4) * 4;
            int k = k0 + bk, c = col0 + bn;
            float *d = &bs[bk * BN + bn];
            if (k < kend && c < N) copy16(d, &B[(size_t)k * N + c]);
            else *(float4 *)d = make_float4(0.f, 0.f, 0.f, 0.f);
        }
        return;
    }
#pragma unroll
    for (int l = 0; l < 4 * A_VECS; l++) {
        int am = ROW(l, BK), ak = COL(l, BK);
        int r = row0 + am, k = k0 + ak;
        float *d = &as[am * AK + ak];
        if (r < M && k < kend) copy4(d, &A[(size_t)r * K + k]);
        else *d = 0.f;
    }
#pragma unroll
    for (int l = 0; l < 4 * B_VECS; l++) {
        int bk = ROW(l, BN), bn = COL(l, BN);
        int k = k0 + bk, c = col0 + bn;
        float *d = &bs[bk * BN + bn];
        if (k < kend && c < N) copy4(d, &B[(size_t)k * N + c]);
        else *d = 0.f;
    }
}

// B at k .. k + 3 of one step: two float4 per k
__device__ __forceinline__ void load_b(float (&bv)[4][8], const float *bs, int tx, int k)
{
#pragma unroll
    for (int q = 0; q < 4; q++) {
        float4 b0 = *(const float4 *)&bs[(k + q) * BN + tx * 4];
        float4 b1 = *(const float4 *)&bs[(k + q) * BN + BN / 2 + tx * 4];
        bv[q][0] = b0.x; bv[q][1] = b0.y; bv[q][2] = b0.z; bv[q][3] = b0.w;
        bv[q][4] = b1.x; bv[q][5] = b1.y; bv[q][6] = b1.z; bv[q][7] = b1.w;
    }
}

// FMAs of k .. k + 3 with B in bv: one float4 of A (4 k of one row) per row; row 0 given
__device__ __forceinline__ void fma_rows(float (&acc)[TM][8], const float (&bv)[4][8],
                                         const float *as, int ty, int k, float4 a)
{
#pragma unroll
    for (int i = 0; i < TM; i++) {
        if (i > 0) a = *(const float4 *)&as[(i * TY + ty) * AK + k];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            acc[i][j] += a.x * bv[0][j];
            acc[i][j] += a.y * bv[1][j];
            acc[i][j] += a.z * bv[2][j];
            acc[i][j] += a.w * bv[3][j];
        }
    }
}

// k = k0 .. k1 - 1 of one step (multiples of 4)
__device__ __forceinline__ void steps(float (&acc)[TM][8], const float *as, const float *bs,
                                      int tx, int ty, int k0, int k1)
{
#pragma unroll
    for (int k = k0; k < k1; k += 4) {
        float bv[4][8];
        load_b(bv, bs, tx, k);
        fma_rows(acc, bv, as, ty, k, *(const float4 *)&as[ty * AK + k]);
    }
}

// the whole kernel for one kind of copy (vec: 16-byte copies; inside: no bounds checks), so
// that each kind gets its own loop and registers; the block's C tile starts at row0, col0 and
// it sums k = kbeg .. kend - 1
__device__ __forceinline__ void gemm(const float *__restrict__ A, const float *__restrict__ B,
                                     float *__restrict__ C, int M, int N, int K, int row0,
                                     int col0, int kbeg, int kend, bool vec, bool inside)
{
    __shared__ __align__(16) float As[STAGES][BM * AK];
    __shared__ __align__(16) float Bs[STAGES][BK * BN];
    int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int tx = (warp % (TX / 8)) * 8 + lane % 8;
    int ty = (warp / (TX / 8)) * 4 + lane / 8;
    int tiles = (kend - kbeg + BK - 1) / BK;
    // inside: this thread's first copy source of the next step in A and B, moved BK on
    const float *a_next = &A[(size_t)(row0 + ROW(0, BK / 4)) * K + kbeg + COL(0, BK / 4) * 4];
    const float *b_next = &B[(size_t)(kbeg + ROW(0, BN / 4)) * N + col0 + COL(0, BN / 4) * 4];
#define LOAD(buf, s)                                                                             \
    if (inside) {                                                                                \
        load_inside(As[buf], Bs[buf], a_next, b_next, N, K, t, (s) >= tiles);                    \
        a_next += BK;                                                                            \
        b_next += (size_t)BK * N;                                                                \
    } else                                                                                       \
        load_tile(As[buf], Bs[buf], A, B, M, N, K, row0, col0, kbeg + (s) * BK, kend, t, vec)
    float acc[TM][8] = {};
    int rd = 0, wr = STAGES - 1;
#if SYNC_MID
    // the barrier sits in the middle of a step, and a loop pass holds the second half of one
    // step and the first half of the next, so that the next step's shared loads can start
    // under this step's FMAs; one step past the end (k >= kend) is zeros and adds nothing
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s <= tiles) { LOAD(s, s); }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
    __syncthreads();
    steps(acc, As[0], Bs[0], tx, ty, 0, BK / 2);
    for (int tile = 0; tile < tiles; tile++) {
        // the second half's first B and A in registers before the barrier: FMAs to issue after it
        float bv[4][8];
        load_b(bv, Bs[rd], tx, BK / 2);
        float4 a = *(const float4 *)&As[rd][ty * AK + BK / 2];
        // step tile + 1 is complete and visible; every thread is done with step tile - 1's buffer
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 3) : "memory");
        __syncthreads();
        if (tile + STAGES - 1 <= tiles) { LOAD(wr, tile + STAGES - 1); }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        int next = rd + 1 == STAGES ? 0 : rd + 1;
        fma_rows(acc, bv, As[rd], ty, BK / 2, a);
        steps(acc, As[rd], Bs[rd], tx, ty, BK / 2 + 4, BK);
        steps(acc, As[next], Bs[next], tx, ty, 0, BK / 2);
        rd = next;
        wr = wr + 1 == STAGES ? 0 : wr + 1;
    }
#else
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles) { LOAD(s, s); }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    for (int tile = 0; tile < tiles; tile++) {
        // this step's group is complete (at most STAGES - 2 younger ones pending), and every
        // thread is done with the buffer that the next copies overwrite (read one step ago)
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
        __syncthreads();
        if (tile + STAGES - 1 < tiles) { LOAD(wr, tile + STAGES - 1); }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        steps(acc, As[rd], Bs[rd], tx, ty, 0, BK);
        rd = rd + 1 == STAGES ? 0 : rd + 1;
        wr = wr + 1 == STAGES ? 0 : wr + 1;
    }
#endif
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int row = row0 + i * TY + ty;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int col = col0 + h * (BN / 2) + tx * 4;
            if (row >= M) continue;
            if (gridDim.z == 1 && N % 4 == 0 && col + 3 < N) {
                *(float4 *)&C[(size_t)row * N + col] = make_float4(acc[i][4 * h], acc[i][4 * h + 1],
                                                                   acc[i][4 * h + 2], acc[i][4 * h + 3]);
                continue;
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (col + j >= N) continue;
                if (gridDim.z == 1) C[(size_t)row * N + col + j] = acc[i][4 * h + j];
                else atomicAdd(&C[(size_t)row * N + col + j], acc[i][4 * h + j]);
            }
        }
    }
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_async(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
            int M, int N, int K)
{
    int bx = blockIdx.x, by = blockIdx.y;
    if (GROUP > 0) {  // consecutive blocks share their B columns and A rows within a group
        int id = blockIdx.y * gridDim.x + blockIdx.x, per_group = GROUP * gridDim.x;
        int first = id / per_group * GROUP, rows = min((int)gridDim.y - first, GROUP);
        by = first + id % per_group % rows;
        bx = id % per_group / rows;
    }
    int row0 = by * BM, col0 = bx * BN;
    int chunk = (K + gridDim.z * BK - 1) / (gridDim.z * BK) * BK;
    // a chunk that starts past K is empty (kend = kbeg: no steps, the block adds zeros)
    int kbeg = blockIdx.z * chunk, kend = max(kbeg, min(K, kbeg + chunk));
    bool vec = K % 4 == 0 && N % 4 == 0 && ((size_t)A | (size_t)B) % 16 == 0;
    if (FAST && vec && row0 + BM <= M && col0 + BN <= N && (kend - kbeg) % BK == 0)
        gemm(A, B, C, M, N, K, row0, col0, kbeg, kend, true, true);
    else if (vec) gemm(A, B, C, M, N, K, row0, col0, kbeg, kend, true, false);
    else gemm(A, B, C, M, N, K, row0, col0, kbeg, kend, false, false);
}
