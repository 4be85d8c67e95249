// Copies of an n x n matrix by a 2-D grid of 2-D blocks, to show what the block's shape does
// to a warp's memory access: a warp of a block narrower than 32 threads spans several rows.
// copy2d_rows reads along rows (consecutive threadIdx.x, consecutive addresses); copy2d_cols
// reads along columns (consecutive threadIdx.x a row of n floats apart).
// fixture archs: sm_75 sm_80 sm_90

__global__ void copy2d_rows(float *out, const float *in, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * n + x] = in[y * n + x];
}

__global__ void copy2d_cols(float *out, const float *in, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * n + x] = in[x * n + y];
}
