// vAdd (Amarís 2018, §2.2.2): C = A + B of n floats, one thread per element, 1-D blocks of
// 256 threads, tid = blockDim.x * blockIdx.x + threadIdx.x as the thesis states.
__global__ void vadd(float *C, float *A, float *B, int n)
{
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n)
        C[tid] = A[tid] + B[tid];
}
