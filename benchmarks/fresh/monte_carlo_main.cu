// Launches one kernel of monte_carlo.cu (named by argv[1]) over 2^20 threads of 256 trials,
// seed 1, twice, for a profiler: python -m benchmarks.ncu_opcodes --record OUT.json
#include "monte_carlo.cu"
#include <cstdio>
#include <cstring>

int main(int argc, char **argv)
{
    const int n = 1 << 20;
    unsigned int *hits;
    cudaMalloc(&hits, n * sizeof(unsigned int));
    const char *name = argc > 1 ? argv[1] : "";
    for (int rep = 0; rep < 2; rep++) {
        if (!strcmp(name, "pi_mrg")) pi_mrg<<<n / 256, 256>>>(1ull, 256, hits);
        else if (!strcmp(name, "pi_xorwow")) pi_xorwow<<<n / 256, 256>>>(1ull, 256, hits);
        else if (!strcmp(name, "pi_philox")) pi_philox<<<n / 256, 256>>>(1ull, 256, hits);
        else { fprintf(stderr, "no kernel %s\n", name); return 1; }
    }
    cudaError_t err = cudaDeviceSynchronize();
    printf("%s: %s\n", name, cudaGetErrorString(err));
    return err != cudaSuccess;
}
