// Block sum reduction: a grid-stride accumulation, a tree in shared memory with
// __syncthreads down to one warp, then warp shuffles; one atomicAdd per block.
__global__ void reduce_sum(const float *in, float *out, int n)
{
    __shared__ float partial[256];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
        sum += in[i];
    partial[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
        if (tid < s)
            partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        float v = partial[tid];
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (tid == 0)
            atomicAdd(out, v);
    }
}
