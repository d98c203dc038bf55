// siboehm/SGEMM_CUDA's twelve kernels (kernels/ and kernels.cuh, copied unchanged from commit
// 60cba6f9b20a198116c76f18de8047f44df8c8b8; MIT License: LICENSE), each template instance
// as the repository's runner (src/runner.cu) launches it at M = N = K = 4096.
#include "kernels.cuh"

static void *instances[] = {
    (void *)&sgemm_global_mem_coalesce<32>,
    (void *)&sgemm_shared_mem_block<32>,
    (void *)&sgemm1DBlocktiling<64, 64, 8, 8>,
    (void *)&sgemm2DBlocktiling<128, 128, 8, 8, 8>,
    (void *)&sgemmVectorize<128, 128, 8, 8, 8>,
    (void *)&sgemmResolveBankConflicts<128, 128, 8, 8, 8>,
    (void *)&sgemmResolveBankExtraCol<128, 128, 8, 8, 8>,
    (void *)&sgemmAutotuned<128, 128, 16, 8, 8>,
    (void *)&sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>,
    (void *)&sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>,
    (void *)&runSgemmDoubleBuffering2<128, 128, 16, 64, 64, 4, 8, 4, 128>,
};
