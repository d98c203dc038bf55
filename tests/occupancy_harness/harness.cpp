// Host-only reference for cudakit.occupancy: feeds configurations to the
// installed CUDA's cuda_occupancy.h and prints its answers, one line each.
//
// stdin, first line:  MODE major minor maxThreadsPerBlock maxThreadsPerSM
//                     regsPerBlock regsPerSM sharedMemPerBlock sharedMemPerSM
//                     sharedMemPerBlockOptin reservedSharedMemPerBlock numSms
// MODE "occ": then lines "blockSize regs smem carveout barriers"
//   (carveout -1 = default; smem is passed as dynamic shared memory, with the
//   function opted in to the device's full opt-in limit)
//   out: "status active limitingFactors regs smem warps blocks barriers
//         allocatedRegs allocatedSmem"
// MODE "best": then lines "regs smemKind smem maxThreads carveout barriers"
//   (smemKind 0: smem bytes for every block size; 1: smem bytes per thread)
//   out: "status minGridSize blockSize"
// MODE "facts": no more lines; out: "maxBlocks smemUnit regUnit maxRegs
//   subPartitions" and then the carveout each size in 0..smemPerSM (step 1 KB)
//   rounds up to, "-1" where the header refuses the size.
#include <cuda_occupancy.h>

#include <cstdio>
#include <cstring>

static cudaOccFuncAttributes function(const cudaOccDeviceProp &prop, int regs,
                                      int maxThreads, int barriers) {
    cudaOccFuncAttributes attr;
    attr.maxThreadsPerBlock = maxThreads;
    attr.numRegs = regs;
    attr.sharedSizeBytes = 0;
    attr.partitionedGCConfig = PARTITIONED_GC_OFF;
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attr.maxDynamicSharedSizeBytes = prop.sharedMemPerBlockOptin;
    attr.numBlockBarriers = barriers;
    return attr;
}

struct PerThread {
    size_t bytes;
    size_t operator()(int blockSize) const { return bytes * (size_t)blockSize; }
};

int main() {
    char mode[16];
    cudaOccDeviceProp prop;
    if (scanf("%15s %d %d %d %d %d %d %zu %zu %zu %zu %d", mode, &prop.computeMajor,
              &prop.computeMinor, &prop.maxThreadsPerBlock, &prop.maxThreadsPerMultiprocessor,
              &prop.regsPerBlock, &prop.regsPerMultiprocessor, &prop.sharedMemPerBlock,
              &prop.sharedMemPerMultiprocessor, &prop.sharedMemPerBlockOptin,
              &prop.reservedSharedMemPerBlock, &prop.numSms) != 12) {
        fprintf(stderr, "bad device line\n");
        return 2;
    }
    prop.warpSize = 32;

    if (strcmp(mode, "occ") == 0) {
        int block, regs, carveout, barriers;
        size_t smem;
        while (scanf("%d %d %zu %d %d", &block, &regs, &smem, &carveout, &barriers) == 5) {
            cudaOccFuncAttributes attr = function(prop, regs, prop.maxThreadsPerBlock, barriers);
            cudaOccDeviceState state;
            state.carveoutConfig = carveout;
            cudaOccResult r;
            memset(&r, 0, sizeof r);
            cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &prop, &attr, &state,
                                                                     block, smem);
            printf("%d %d %u %d %d %d %d %d %d %zu\n", (int)e, r.activeBlocksPerMultiprocessor,
                   r.limitingFactors, r.blockLimitRegs, r.blockLimitSharedMem,
                   r.blockLimitWarps, r.blockLimitBlocks, r.blockLimitBarriers,
                   r.allocatedRegistersPerBlock, r.allocatedSharedMemPerBlock);
        }
    } else if (strcmp(mode, "best") == 0) {
        int regs, kind, maxThreads, carveout, barriers;
        size_t smem;
        while (scanf("%d %d %zu %d %d %d", &regs, &kind, &smem, &maxThreads, &carveout,
                     &barriers) == 6) {
            cudaOccFuncAttributes attr = function(prop, regs, maxThreads, barriers);
            cudaOccDeviceState state;
            state.carveoutConfig = carveout;
            int grid = -1, block = -1;
            cudaOccError e = kind == 0
                ? cudaOccMaxPotentialOccupancyBlockSize(&grid, &block, &prop, &attr, &state, smem)
                : cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(&grid, &block, &prop, &attr,
                                                                    &state, PerThread{smem});
            printf("%d %d %d\n", (int)e, grid, block);
        }
    } else if (strcmp(mode, "facts") == 0) {
        int maxBlocks = 0, smemUnit = 0, regUnit = 0, maxRegs = 0, parts = 0;
        cudaOccMaxBlocksPerMultiprocessor(&maxBlocks, &prop);
        cudaOccSMemAllocationGranularity(&smemUnit, &prop);
        cudaOccRegAllocationGranularity(&regUnit, &prop);
        cudaOccRegAllocationMaxPerThread(&maxRegs, &prop);
        cudaOccSubPartitionsPerMultiprocessor(&parts, &prop);
        printf("%d %d %d %d %d\n", maxBlocks, smemUnit, regUnit, maxRegs, parts);
        if (prop.computeMajor >= 7) {
            for (size_t size = 0; size <= prop.sharedMemPerMultiprocessor; size += 1024) {
                size_t aligned = size;
                cudaOccError e = cudaOccAlignUpShmemSizeVoltaPlus(&aligned, &prop);
                printf("%zu %ld\n", size, e == CUDA_OCC_SUCCESS ? (long)aligned : -1L);
            }
        }
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
