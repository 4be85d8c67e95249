// Bit fields of the thread index: 1-D blocks mapped onto tiles with / and % by powers of two
// (docs/sass-import.md, "Bit fields of the thread index").

// A 32-wide tile of C a block row, the column following the lane (threadIdx.x % 32), the
// row the warp (threadIdx.x / 32): A read by broadcast, B along the lanes.
__global__ void rows_by_warp(const float *A, const float *B, float *C, int n)
{
    unsigned row = blockIdx.x * 32 + threadIdx.x / 32;
    unsigned col = blockIdx.y * 32 + threadIdx.x % 32;
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
        sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}

// An 8-wide slice: each warp copies 4 rows of 8 floats into shared memory (threadIdx.x / 8,
// threadIdx.x % 8), then reads it back along a column.
__global__ void slice8(const float *A, float *out, int n)
{
    __shared__ float tile[64 * 8];
    unsigned r = threadIdx.x / 8, c = threadIdx.x % 8;
    tile[r * 8 + c] = A[(blockIdx.x * 64 + r) * n + c];
    __syncthreads();
    out[blockIdx.x * 512 + threadIdx.x] = tile[(threadIdx.x % 64) * 8 + threadIdx.x / 64];
}

// One warp a row of A (the global warp index (blockIdx.x * blockDim.x + threadIdx.x) / 32),
// its lanes along the row.
__global__ void warp_per_row(const float *A, const float *x, float *y, int n)
{
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    float s = 0.0f;
    for (int j = lane; j < n; j += 32)
        s += A[row * n + j] * x[j];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffff, s, o);
    if (lane == 0)
        y[row] = s;
}
