// fixture archs: sm_75 sm_80 sm_90
// Memory access patterns for the SASS importer's address analysis.
__global__ void copy_rows(const float *in, float *out, int n)
{
    int row = blockIdx.x;
    int col = threadIdx.x;
    out[row * n + col] = in[row * n + col];          // stride 1 along a warp
}

__global__ void copy_cols(const float *in, float *out, int n)
{
    int row = blockIdx.x;
    int col = threadIdx.x;
    out[col * n + row] = in[col * n + row];          // stride n along a warp
}

#define TILE 32
__global__ void transpose_shared(const float *in, float *out, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void transpose_padded(const float *in, float *out, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

__constant__ float coeff[16];
__global__ void scale_const(const float *in, float *out, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * coeff[3] * in[i];
}

__global__ void stencil3(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i < n - 1)
        out[i] = in[i - 1] + in[i] + in[i + 1];
}

__global__ void stencil5(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + 2;
    if (i < n - 2)
        out[i] = 0.1f * in[i - 2] + 0.2f * in[i - 1] + 0.4f * in[i] + 0.2f * in[i + 1]
                 + 0.1f * in[i + 2];
}

__global__ void gather(const float *in, const int *idx, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[idx[i]];
}

__global__ void strided_loop(const float *in, float *out, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < m; ++k)
        s += in[k * n + i];
    out[i] = s;
}
