// MAU (Amarís 2018, §2.2.2): matrix addition S = A + B of n×n single-precision matrices, one
// thread per element, 16×16 blocks (Table 2.3). Uncoalesced: tid = i*n + j with i following
// threadIdx.x, so the lanes of a warp touch elements n floats apart. Each thread reads one
// element of each matrix, does one add and one store (Table 3.2: ld_1 = 2, st_1 = 1).
__global__ void mau(float *S, float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int tid = i * n + j;
    if (tid < n * n)
        S[tid] = A[tid] + B[tid];
}
