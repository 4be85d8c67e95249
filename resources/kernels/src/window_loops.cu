// Loops whose counts a run-time radius or the block decides, as stencils, reductions and
// scans write them:
// - centred_window: j from -r to r, which nvcc unrolls with the remainder loop first
//   (n mod 4 iterations) and the last copies as straight code after the unrolled loop;
// - window_span: j from 0 to 2r, the remainder loop last, counted down to -1 because
//   2r + 1 is odd;
// - interleaved_reduce: a stride doubled each trip up to blockDim.x (s *= 2);
// - kogge_stone_scan: the same doubling, the stride compared with the thread index.

__global__ void centred_window(const float *in, float *out, int n, int r)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= r && i < n - r) {
        float s = 0.0f;
        for (int j = -r; j <= r; j++)
            s += in[i + j];
        out[i] = s;
    }
}

__global__ void window_span(const float *in, float *out, int n, int r)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= r && i < n - r) {
        float s = 0.0f;
        for (int j = 0; j < 2 * r + 1; j++)
            s += in[i - r + j];
        out[i] = s;
    }
}

__global__ void interleaved_reduce(const float *in, float *out, int n)
{
    extern __shared__ float partial[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned index = 2 * s * tid;
        if (index < blockDim.x)
            partial[index] += partial[index + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}

__global__ void kogge_stone_scan(const float *in, float *out, int n)
{
    extern __shared__ float x[];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    x[threadIdx.x] = i < n ? in[i] : 0.0f;
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        float t = 0.0f;
        if (threadIdx.x >= stride)
            t = x[threadIdx.x] + x[threadIdx.x - stride];
        __syncthreads();
        if (threadIdx.x >= stride)
            x[threadIdx.x] = t;
    }
    if (i < n)
        out[i] = x[threadIdx.x];
}
