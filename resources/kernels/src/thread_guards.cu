// Guards on the thread index alone, whose share of a block's warps only the launch's block
// shape decides (docs/sass-import.md, "Guards"): a stencil's halo loads under
// threadIdx.x < RADIUS, a warp's partial sum under lane == 0, the last warp's sum under
// warp == 0, a 2-D tile's left edge under threadIdx.x == 0, and a right halo loaded by the
// block's last threads (threadIdx.x >= blockDim.x - RADIUS, threadIdx.x == blockDim.x - 1),
// halo loads whose thread test is combined with a bounds check (threadIdx.x < RADIUS &&
// g >= RADIUS), and a 2-D tile whose inner threads compute outputs (tx < 12 && ty < 12 &&
// row < h && col < w).
#define RADIUS 3
#define BLOCK 256

__global__ void halo_stencil(const float *in, float *out)
{
    __shared__ float tile[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
    int l = threadIdx.x + RADIUS;
    tile[l] = in[g];
    if (threadIdx.x < RADIUS) {
        tile[l - RADIUS] = in[g - RADIUS];
        tile[l + BLOCK] = in[g + BLOCK];
    }
    __syncthreads();
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k)
        sum += tile[l + k];
    out[g] = sum;
}

__global__ void warp_sums(const float *in, float *out)
{
    __shared__ float partial[32];
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = partial[lane];
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}

__global__ void tile_left_edge(const float *in, float *out, int width)
{
    __shared__ float tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x + 1] = in[y * width + x];
    if (threadIdx.x == 0)
        tile[threadIdx.y][0] = x > 0 ? in[y * width + x - 1] : 0.0f;
    __syncthreads();
    out[y * width + x] = tile[threadIdx.y][threadIdx.x] + tile[threadIdx.y][threadIdx.x + 1];
}

__global__ void right_halo(const float *in, float *out)
{
    extern __shared__ float row[];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    row[threadIdx.x] = in[g];
    if (threadIdx.x >= blockDim.x - RADIUS)
        row[threadIdx.x + RADIUS] = in[g + RADIUS];
    __syncthreads();
    float sum = row[threadIdx.x] + row[threadIdx.x + RADIUS];
    if (threadIdx.x == blockDim.x - 1)
        out[blockIdx.x] = sum;
    else
        out[gridDim.x + g] = sum;
}

__global__ void halo_checked(const float *in, float *out, int n)
{
    __shared__ float tile[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x + RADIUS] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS && g >= RADIUS)
        tile[threadIdx.x] = in[g - RADIUS];
    if (threadIdx.x < RADIUS && g + BLOCK < n)
        tile[threadIdx.x + BLOCK + RADIUS] = in[g + BLOCK];
    __syncthreads();
    if (g < n)
        out[g] = tile[threadIdx.x] + tile[threadIdx.x + RADIUS] + tile[threadIdx.x + 2 * RADIUS];
}

#define MASK 5
#define TILE 16
#define INNER (TILE - MASK + 1)
__constant__ float mask[MASK * MASK];

__global__ void tile_inner(const float *src, float *dst, int h, int w)
{
    __shared__ float tile[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * INNER + ty, col = blockIdx.x * INNER + tx;
    int r = row - MASK / 2, c = col - MASK / 2;
    tile[ty][tx] = (r >= 0 && r < h && c >= 0 && c < w) ? src[r * w + c] : 0.0f;
    __syncthreads();
    if (ty < INNER && tx < INNER && row < h && col < w) {
        float acc = 0.0f;
        for (int a = 0; a < MASK; a++)
            for (int b = 0; b < MASK; b++)
                acc += tile[ty + a][tx + b] * mask[a * MASK + b];
        dst[row * w + col] = acc;
    }
}
