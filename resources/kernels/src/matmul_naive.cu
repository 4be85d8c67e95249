// Naive matrix multiply C = A * B (n x n), one thread per element of C and no shared memory:
// the threads of a block re-read A's rows and B's columns from global memory, which the
// L1 of Volta and later GPUs serves within a block (the L1 reuse of the memory model).
// fixture archs: sm_75 sm_80 sm_90
__global__ void matmul_naive(const float *A, const float *B, float *C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}
