// MAC (Amarís 2018, §2.2.2): MAU with tid = j*n + i, as the thesis states for coalesced
// accesses: i follows threadIdx.x, so consecutive lanes touch consecutive floats.
__global__ void mac(float *S, float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int tid = j * n + i;
    if (tid < n * n)
        S[tid] = A[tid] + B[tid];
}
