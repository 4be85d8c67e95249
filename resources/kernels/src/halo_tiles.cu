// Tiled stencils whose output threads are the tile's inner ones: each block loads a tile
// with its halo into shared memory and only the threads away from the halo write, the
// textbook's "tileCol >= 0 && tileCol < OUT_TILE_DIM" with tileCol = threadIdx.x - RADIUS.
// nvcc writes that range as one unsigned compare of threadIdx.x - RADIUS.
#define RADIUS 2
#define IN_TILE 32
#define OUT_TILE (IN_TILE - 2 * RADIUS)

__constant__ float mask_c[2 * RADIUS + 1][2 * RADIUS + 1];

__global__ void tiled_convolution(const float *in, float *out, int width, int height)
{
    __shared__ float tile[IN_TILE][IN_TILE];
    int col = blockIdx.x * OUT_TILE + threadIdx.x - RADIUS;
    int row = blockIdx.y * OUT_TILE + threadIdx.y - RADIUS;
    bool inside = row >= 0 && row < height && col >= 0 && col < width;
    tile[threadIdx.y][threadIdx.x] = inside ? in[row * width + col] : 0.0f;
    __syncthreads();
    int tc = threadIdx.x - RADIUS, tr = threadIdx.y - RADIUS;
    if (inside && tc >= 0 && tc < OUT_TILE && tr >= 0 && tr < OUT_TILE) {
        float acc = 0.0f;
        for (int i = 0; i < 2 * RADIUS + 1; i++)
            for (int j = 0; j < 2 * RADIUS + 1; j++)
                acc += mask_c[i][j] * tile[tr + i][tc + j];
        out[row * width + col] = acc;
    }
}

__global__ void tiled_stencil_1d(const float *in, float *out, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * (256 - 2 * RADIUS) + threadIdx.x - RADIUS;
    tile[threadIdx.x] = (i >= 0 && i < n) ? in[i] : 0.0f;
    __syncthreads();
    int t = threadIdx.x - RADIUS;
    if (t >= 0 && t < 256 - 2 * RADIUS && i < n) {
        float acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; k++)
            acc += tile[threadIdx.x + k];
        out[i] = acc;
    }
}
