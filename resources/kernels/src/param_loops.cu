// Loop shapes of textbook kernels whose trips a kernel parameter decides, written here in
// the style of the CUDA literature (the names are descriptive, not copies of any file):
//  - a tiled product whose phase loop runs to Width / TILE (a signed division: nvcc adds
//    TILE - 1 to a negative Width before the shift, LEA.HI);
//  - a tiled product that walks A's row of tiles from its block's first element to its
//    last, `a <= aEnd` with aBegin = wA * TILE * blockIdx.y (the block index cancels);
//  - a 3-D stencil that marches along z from 1 to nz - 2 (nvcc unrolls it by 4 and reuses
//    the register it compares as an address between compares);
//  - a row sum whose threads stride through a row by blockDim.x (a block-stride loop);
//  - a 2-D convolution over a (2r + 1) x (2r + 1) mask, r a parameter (its row loop's
//    counter kept in a uniform register and copied before each compare).
#define TILE 16
#define SAMPLE_TILE 32

__global__ void phase_product(const float *M, const float *N, float *P, int Width)
{
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int ph = 0; ph < Width / TILE; ++ph) {
        Ms[ty][tx] = M[row * Width + ph * TILE + tx];
        Ns[ty][tx] = N[(ph * TILE + ty) * Width + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += Ms[ty][k] * Ns[k][tx];
        __syncthreads();
    }
    P[row * Width + col] = acc;
}

__global__ void tile_walk_product(float *C, const float *A, const float *B, int wA, int wB)
{
    __shared__ float As[SAMPLE_TILE][SAMPLE_TILE];
    __shared__ float Bs[SAMPLE_TILE][SAMPLE_TILE];
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int aBegin = wA * SAMPLE_TILE * by;
    int aEnd = aBegin + wA - 1;
    int bBegin = SAMPLE_TILE * bx;
    float sum = 0.0f;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += SAMPLE_TILE, b += SAMPLE_TILE * wB) {
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SAMPLE_TILE; ++k)
            sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[wB * SAMPLE_TILE * by + SAMPLE_TILE * bx + wB * ty + tx] = sum;
}

__global__ void z_march_stencil(const float *in, float *out, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < 1 || j < 1 || i >= nx - 1 || j >= ny - 1)
        return;
    for (int k = 1; k < nz - 1; k++) {
        int c = (k * ny + j) * nx + i;
        out[c] = in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx]
                                 + in[c - nx * ny] + in[c + nx * ny] - 6.0f * in[c]);
    }
}

__global__ void row_sum(const float *A, float *y, int cols)
{
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        acc += A[blockIdx.x * cols + c];
    atomicAdd(&y[blockIdx.x], acc);
}

__global__ void radius_convolution(const float *in, const float *mask, float *out, int r,
                                   int width, int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    float acc = 0.0f;
    for (int i = 0; i < 2 * r + 1; i++) {
        for (int j = 0; j < 2 * r + 1; j++) {
            int y = row - r + i, x = col - r + j;
            if (y >= 0 && y < height && x >= 0 && x < width)
                acc += mask[i * (2 * r + 1) + j] * in[y * width + x];
        }
    }
    out[row * width + col] = acc;
}
