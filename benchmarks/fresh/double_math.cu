// Kernels whose time is double-precision division and square root, and 64-bit integer
// remainders, written for the eighth held-out batch (session 31): each predicted before the
// GPU timed it.

// Kepler's equation E - e sin E = M for the eccentric anomaly E of each orbit, by Newton's
// method from E = M: eight steps, each a double division (and libdevice's sin and cos)
__global__ void kepler(const double *mean_anomaly, const double *eccentricity, double *out,
                       int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double m = mean_anomaly[i], e = eccentricity[i], E = m;
    for (int step = 0; step < 8; step++)
        E -= (E - e * sin(E) - m) / (1.0 - e * cos(E));
    out[i] = E;
}

// unit vectors of an array of 3-vectors (x, y, z interleaved): a square root and a division
__global__ void normalize3(const double *v, double *unit, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = v[3 * i], y = v[3 * i + 1], z = v[3 * i + 2];
    double norm = sqrt(x * x + y * y + z * z);
    unit[3 * i] = x / norm;
    unit[3 * i + 1] = y / norm;
    unit[3 * i + 2] = z / norm;
}

// term frequencies of a document-term count matrix: each count over its row's total, in
// double; most counts are zero, and a zero numerator takes the division's slow path
__global__ void term_frequency(const int *counts, const double *totals, double *freq,
                               int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
    if (c >= cols) return;
    freq[(size_t)r * cols + c] = counts[(size_t)r * cols + c] / totals[r];
}

// the bucket of each 64-bit key in a table of a prime number of buckets (multiplicative
// hashing, then a 64-bit remainder), for several rounds of rehashing
__global__ void bucket_of(const unsigned long long *keys, unsigned int *bucket, int n,
                          unsigned long long buckets, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long k = keys[i];
    for (int r = 0; r < rounds; r++)
        k = (k * 0x9E3779B97F4A7C15ull + r) % buckets;
    bucket[i] = (unsigned int)k;
}
