// heat3d_vec4: each thread owns the float4 of columns 4q..4q+3 of row y and walks z over
// its slab (gridDim.z slabs), keeping below/here/above in registers; north/south rows and
// west/east floats come through L1/L2. Requires nx % 4 == 0. Borders keep their value.
__global__ void heat3d_vec4(const float *__restrict__ u, float *__restrict__ v, int nx, int ny,
                            int nz, float c0, float c1)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int nq = nx / 4;
    int slab = (nz - 2 + gridDim.z - 1) / gridDim.z;
    int z0 = 1 + blockIdx.z * slab, z1 = min(z0 + slab, nz - 1);
    if (q >= nq || y < 1 || y >= ny - 1 || z0 >= z1) return;
    const float4 *u4 = reinterpret_cast<const float4 *>(u);
    float4 *v4 = reinterpret_cast<float4 *>(v);
    size_t plane = (size_t)nq * ny;
    size_t k = (size_t)z0 * plane + (size_t)y * nq + q;
    float4 below = u4[k - plane], here = u4[k];
    for (int z = z0; z < z1; ++z, k += plane) {
        float4 above = u4[k + plane];
        float4 north = u4[k - nq], south = u4[k + nq];
        float west = q > 0 ? u[4 * k - 1] : 0.0f;
        float east = q < nq - 1 ? u[4 * k + 4] : 0.0f;
        float4 out;
        out.x = q > 0 ? c0 * here.x + c1 * ((below.x + above.x) + (north.x + south.x) + (west + here.y)) : here.x;
        out.y = c0 * here.y + c1 * ((below.y + above.y) + (north.y + south.y) + (here.x + here.z));
        out.z = c0 * here.z + c1 * ((below.z + above.z) + (north.z + south.z) + (here.y + here.w));
        out.w = q < nq - 1 ? c0 * here.w + c1 * ((below.w + above.w) + (north.w + south.w) + (here.z + east)) : here.w;
        v4[k] = out;
        below = here;
        here = above;
    }
}

// heat3d_zreg: one point per thread, z walked in registers, no shared memory.
__global__ void heat3d_zreg(const float *__restrict__ u, float *__restrict__ v, int nx, int ny,
                            int nz, float c0, float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int slab = (nz - 2 + gridDim.z - 1) / gridDim.z;
    int z0 = 1 + blockIdx.z * slab, z1 = min(z0 + slab, nz - 1);
    if (x < 1 || x >= nx - 1 || y < 1 || y >= ny - 1 || z0 >= z1) return;
    size_t plane = (size_t)nx * ny;
    size_t k = (size_t)z0 * plane + (size_t)y * nx + x;
    float below = u[k - plane], here = u[k];
    for (int z = z0; z < z1; ++z, k += plane) {
        float above = u[k + plane];
        v[k] = c0 * here + c1 * ((below + above) + (u[k - nx] + u[k + nx]) + (u[k - 1] + u[k + 1]));
        below = here;
        here = above;
    }
}
