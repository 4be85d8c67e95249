// Kernels of the public H100 SXM5 runs of ahmadsharif1/cuda_study (docs/validation.md, "The
// Hopper set"), written here from the access patterns those runs describe: the naive FP32
// matrix product, the shared-memory tiled transposes and the grid-stride float4 copy.

// C (M x N) = A (M x K) * B (K x N), row-major, one thread per element of C (16 x 16 blocks:
// the lanes of a warp share two rows of C and run along its columns).
__global__ void matmul_naive_f32(const float *A, const float *B, float *C, int M, int K, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

// A 32 x 32 tile through shared memory, 32 x 8 threads, each moving 4 rows of the tile; the
// tile is read back along its columns without padding: 32-way bank conflicts.
#define TILE 32
#define ROWS 8
__global__ void transpose_tile(float *out, const float *in, size_t width, size_t height)
{
    __shared__ float tile[TILE][TILE];
    size_t x = blockIdx.x * TILE + threadIdx.x;
    size_t y = blockIdx.y * TILE + threadIdx.y;
    for (int r = 0; r < TILE; r += ROWS)
        if (x < width && y + r < height)
            tile[threadIdx.y + r][threadIdx.x] = in[(y + r) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int r = 0; r < TILE; r += ROWS)
        if (x < height && y + r < width)
            out[(y + r) * height + x] = tile[threadIdx.x][threadIdx.y + r];
}

// The same transpose with a padded tile (TILE + 1 columns: no conflicts) and float4 global
// accesses: 8 x 32 threads, each loading 4 consecutive floats of a row and storing 4 of a
// column of the tile as one float4.
__global__ void transpose_tile_vec(float *out, const float *in, size_t width, size_t height)
{
    __shared__ float tile[TILE][TILE + 1];
    size_t x = blockIdx.x * TILE + threadIdx.x * 4;
    size_t y = blockIdx.y * TILE + threadIdx.y;
    if (x + 3 < width && y < height) {
        float4 v = *reinterpret_cast<const float4 *>(&in[y * width + x]);
        tile[threadIdx.y][threadIdx.x * 4 + 0] = v.x;
        tile[threadIdx.y][threadIdx.x * 4 + 1] = v.y;
        tile[threadIdx.y][threadIdx.x * 4 + 2] = v.z;
        tile[threadIdx.y][threadIdx.x * 4 + 3] = v.w;
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x * 4;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x + 3 < height && y < width) {
        int c = threadIdx.x * 4;
        float4 v = make_float4(tile[c][threadIdx.y], tile[c + 1][threadIdx.y],
                               tile[c + 2][threadIdx.y], tile[c + 3][threadIdx.y]);
        *reinterpret_cast<float4 *>(&out[y * height + x]) = v;
    }
}

// n float4 from src to dst by a grid-stride loop, 4 loads then 4 stores a trip, the last
// partial trip one element at a time.
__global__ void copy_f4_unroll4(const float4 *__restrict__ src, float4 *__restrict__ dst,
                                size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
            v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < 4; ++u)
            dst[i + u * stride] = v[u];
    }
    for (; i < n; i += stride)
        dst[i] = src[i];
}
