// Issue 16, N-body diagnostic (timing only, the forces are wrong): the 64 bodies j are
// compile-time numbers (a function of k in the fully unrolled loop), so they become float
// immediates of the FADDs and FMULs and an interaction is 12 FP32 instructions + 1 MUFU and
// nothing else: no LDS, no tile, no barrier. The empty asm makes bi look changed on every
// pass, so the compiler cannot hoist the 64 interactions out of the outer loop.
#define NB_T 256
#define NB_MINB 8
#define NB_CMUFU 1      // 0: rsqrtf replaced by an FMUL as well (12 FP32 instructions, no MUFU)

__global__ void __launch_bounds__(NB_T, NB_MINB)
nbody_cdiag(const float4 *__restrict__ body, float4 *__restrict__ acc, int n, float eps2)
{
    int i = blockIdx.x * NB_T + threadIdx.x;
    float4 bi = i < n ? body[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int r = 0; r < n; r += 64) {
        asm volatile("" : "+f"(bi.x), "+f"(bi.y), "+f"(bi.z));
#pragma unroll
        for (int k = 0; k < 64; ++k) {
            float4 bj = make_float4(0.0153f * k, 0.0097f * (k ^ 37), 0.0131f * (k ^ 11), 1.0f / 64);
            float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
            float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
#if NB_CMUFU
            float inv = rsqrtf(r2);
#else
            float inv = r2 * 0.37f;
#endif
            float s = bj.w * inv * inv * inv;
            ax = fmaf(s, dx, ax);
            ay = fmaf(s, dy, ay);
            az = fmaf(s, dz, az);
        }
    }
    if (i < n) acc[i] = make_float4(ax, ay, az, 0.0f);
}
