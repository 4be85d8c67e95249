// Loops whose trip counts the listing decides (docs/sass-import.md, "Trip counts"):
// from the launch's block dimensions, from numbers alone, and one that neither decides.

// A column sum over a tile as wide as the block: blockDim.x trips, kept a loop.
__global__ void tile_column_sum(const float *tile, float *out)
{
    float s = 0.f;
#pragma unroll 1
    for (int k = 0; k < blockDim.x; ++k)
        s += tile[k * blockDim.x + threadIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// A fixed number of steps the compiler is told not to unroll: 100 trips.
__global__ void fixed_steps(float *x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
#pragma unroll 1
    for (int k = 0; k < 100; ++k)
        v = v * 0.5f + 1.f;
    x[i] = v;
}

// Half the block's rows, unrolled by the compiler (blockDim.y / 2 source iterations).
__global__ void half_rows(const float *in, float *out, int pitch)
{
    float s = 0.f;
    for (int k = 0; k < blockDim.y / 2; ++k)
        s += in[k * pitch + threadIdx.x];
    out[threadIdx.y * pitch + threadIdx.x] = s;
}

// Each thread its own count (from threadIdx.x): not decided by the block.
__global__ void per_thread(const float *in, float *out)
{
    float s = 0.f;
#pragma unroll 1
    for (int k = threadIdx.x; k < blockDim.x; k += 32)
        s += in[k];
    out[threadIdx.x] = s;
}

// A tiled product whose tile is as wide as the block (the tile width known only at run
// time): the inner loop's blockDim.x steps, unrolled by the compiler.
__global__ void tile_product(const float *a, const float *b, float *c, int n)
{
    extern __shared__ float tiles[];
    const int w = blockDim.x;
    float *ta = tiles, *tb = tiles + w * w;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * w + ty, col = blockIdx.x * w + tx;
    float s = 0.f;
    for (int p = 0; p < n / w; ++p) {
        ta[ty * w + tx] = a[row * n + p * w + tx];
        tb[ty * w + tx] = b[(p * w + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < w; ++k)
            s += ta[ty * w + k] * tb[k * w + tx];
        __syncthreads();
    }
    c[row * n + col] = s;
}
