// dotP (Amarís 2018, §2.2.2): the dot product of two vectors of n floats. Each thread
// multiplies one position of A and B and stores the product in shared memory; the block
// reduces its 256 products in shared memory in log2(256) = 8 steps (Table 3.2: ld_0 = st_0 =
// log(BS)), and thread 0 writes the block's partial sum, a vector of n/256 sums for the host
// (Table 3.2: st_1 = 1/GS per thread). 1-D blocks of 256 threads (Table 2.3: BS × 4 bytes of
// shared memory per block).
#define BS 256
__global__ void dotp(float *partial, float *A, float *B, int n)
{
    __shared__ float cache[BS];
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    cache[threadIdx.x] = tid < n ? A[tid] * B[tid] : 0.0f;
    __syncthreads();
    for (int s = BS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = cache[0];
}
