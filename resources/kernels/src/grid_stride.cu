// Grid-stride loops (docs/sass-import.md, "Grid-stride loops"): the count a kernel
// parameter and the launch's grid decide, with an int and a size_t index, and loops the
// rule leaves alone.

// y[i] = 2 x[i] over n floats, an int index a grid apart.
__global__ void stride_int(float *y, const float *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = 2.0f * x[i];
}

// a[i] = b[i] + s c[i] over n doubles, a size_t index (a 64-bit compare).
__global__ void stride_size(double *a, const double *b, const double *c, double s, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x)
        a[i] = b[i] + s * c[i];
}

// Two grid strides a trip: not the rule's stride, left a variable.
__global__ void stride_twice(float *y, const float *x, int n)
{
    int stride = 2 * blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = 2.0f * x[i];
}

// Rows a grid apart along y: a warp runs while its first row does.
__global__ void stride_rows(float *y, const float *x, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += blockDim.y * gridDim.y)
        y[r * cols + col] = x[r * cols + col];
}

// Four grid strides a trip, then the rest one stride a trip (an unrolled grid-stride
// scale): the two loops read as one grid-stride loop over n.
__global__ void stride_unrolled(float4 *y, const float4 *__restrict__ x, float a, size_t n)
{
    const size_t step = (size_t)blockDim.x * gridDim.x;
    size_t k = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    while (k + 3 * step < n) {
        float4 t[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
            t[j] = x[k + j * step];
#pragma unroll
        for (int j = 0; j < 4; ++j)
            y[k + j * step] = make_float4(a * t[j].x, a * t[j].y, a * t[j].z, a * t[j].w);
        k += 4 * step;
    }
    for (; k < n; k += step)
        y[k] = make_float4(a * x[k].x, a * x[k].y, a * x[k].z, a * x[k].w);
}

// A reduction's first pass over chunks of 512 elements a block (a template's block size of
// 256, each thread taking i and i + 256), the chunks a grid apart: a grid-stride loop of
// chunks.
__global__ void chunk_sum(const float *x, float *partial, unsigned int n)
{
    __shared__ float s[256];
    float acc = 0.0f;
    for (unsigned int i = blockIdx.x * 512 + threadIdx.x; i < n; i += 512 * gridDim.x)
        acc += x[i] + (i + 256 < n ? x[i + 256] : 0.0f);
    s[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int k = 0; k < 256; k++)
            t += s[k];
        partial[blockIdx.x] = t;
    }
}

// The same with chunks of two blocks' threads at run time (2 * blockDim.x).
__global__ void pair_sum(const float *x, float *partial, int n)
{
    float acc = 0.0f;
    for (int i = blockIdx.x * 2 * blockDim.x + threadIdx.x; i < n; i += 2 * blockDim.x * gridDim.x)
        acc += x[i] + (i + (int)blockDim.x < n ? x[i + blockDim.x] : 0.0f);
    atomicAdd(partial + blockIdx.x, acc);
}
