// Stands in for cuBLAS's header, which siboehm's kernels include but do not use (this
// machine's CUDA toolkit has no cuBLAS).
#pragma once
