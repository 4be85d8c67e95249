// 3-D seven-point stencils that walk their block's planes along z (the textbook's thread
// coarsening): each block computes OUT_TILE planes from blockIdx.z * OUT_TILE on, keeping
// the previous, current and next plane in shared memory (march_shared) or the previous and
// next in registers (march_registers). nvcc unrolls the walk by 2 and peels a first plane
// on the path where the plane index would overflow, so the counter enters the loop as
// either the block's first plane or the one after it.
#define IN_TILE 32
#define OUT_TILE 30

__constant__ float w0, w1, w2, w3, w4, w5, w6;

__device__ bool inside(int i, int j, int k, unsigned int n)
{
    return i >= 0 && i < n && j >= 0 && j < n && k >= 0 && k < n;
}

__global__ void march_shared(const float *in, float *out, unsigned int n)
{
    int first = blockIdx.z * OUT_TILE;
    int j = blockIdx.y * OUT_TILE + threadIdx.y - 1;
    int k = blockIdx.x * OUT_TILE + threadIdx.x - 1;
    __shared__ float below[IN_TILE][IN_TILE], here[IN_TILE][IN_TILE], above[IN_TILE][IN_TILE];
    if (inside(first - 1, j, k, n))
        below[threadIdx.y][threadIdx.x] = in[(first - 1) * n * n + j * n + k];
    if (inside(first, j, k, n))
        here[threadIdx.y][threadIdx.x] = in[first * n * n + j * n + k];
    for (int i = first; i < first + OUT_TILE; ++i) {
        if (inside(i + 1, j, k, n))
            above[threadIdx.y][threadIdx.x] = in[(i + 1) * n * n + j * n + k];
        __syncthreads();
        if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1 && k >= 1 && k < n - 1 &&
            threadIdx.y >= 1 && threadIdx.y < IN_TILE - 1 &&
            threadIdx.x >= 1 && threadIdx.x < IN_TILE - 1)
            out[i * n * n + j * n + k] = w0 * here[threadIdx.y][threadIdx.x]
                + w1 * here[threadIdx.y][threadIdx.x - 1] + w2 * here[threadIdx.y][threadIdx.x + 1]
                + w3 * here[threadIdx.y - 1][threadIdx.x] + w4 * here[threadIdx.y + 1][threadIdx.x]
                + w5 * below[threadIdx.y][threadIdx.x] + w6 * above[threadIdx.y][threadIdx.x];
        __syncthreads();
        below[threadIdx.y][threadIdx.x] = here[threadIdx.y][threadIdx.x];
        here[threadIdx.y][threadIdx.x] = above[threadIdx.y][threadIdx.x];
    }
}

__global__ void march_registers(const float *in, float *out, unsigned int n)
{
    int first = blockIdx.z * OUT_TILE;
    int j = blockIdx.y * OUT_TILE + threadIdx.y - 1;
    int k = blockIdx.x * OUT_TILE + threadIdx.x - 1;
    __shared__ float here_s[IN_TILE][IN_TILE];
    float below = 0.0f, here = 0.0f, above = 0.0f;
    if (inside(first - 1, j, k, n))
        below = in[(first - 1) * n * n + j * n + k];
    if (inside(first, j, k, n)) {
        here = in[first * n * n + j * n + k];
        here_s[threadIdx.y][threadIdx.x] = here;
    }
    for (int i = first; i < first + OUT_TILE; ++i) {
        if (inside(i + 1, j, k, n))
            above = in[(i + 1) * n * n + j * n + k];
        __syncthreads();
        if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1 && k >= 1 && k < n - 1 &&
            threadIdx.y >= 1 && threadIdx.y < IN_TILE - 1 &&
            threadIdx.x >= 1 && threadIdx.x < IN_TILE - 1)
            out[i * n * n + j * n + k] = w0 * here + w1 * here_s[threadIdx.y][threadIdx.x - 1]
                + w2 * here_s[threadIdx.y][threadIdx.x + 1]
                + w3 * here_s[threadIdx.y - 1][threadIdx.x]
                + w4 * here_s[threadIdx.y + 1][threadIdx.x] + w5 * below + w6 * above;
        __syncthreads();
        below = here;
        here = above;
        here_s[threadIdx.y][threadIdx.x] = above;
    }
}
