// MMGU (Amarís 2018, §2.2.2, Figure 2.5): matrix multiplication C = A·B of n×n single-precision
// matrices in global memory, one thread per element of C, 2-D blocks of BS×BS threads
// (BS = 16, Table 2.3). Uncoalesced: the column j follows threadIdx.x, so the 32 lanes of a
// warp read A and write C one row (n floats) apart; the B element is the same for each half
// warp. Each thread reads n elements of each matrix and does n FMAs and one store (Table 3.2).
// The thesis' kernel has no bounds check: n is a multiple of BS.
__global__ void mmgu(float *C, float *A, float *B, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[j * n + k] * B[k * n + i];
    C[j * n + i] = acc;
}
