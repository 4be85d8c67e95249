// MMGC (Amarís 2018, §2.2.2): MMGU with the access pattern changed to coalesced accesses, as
// the thesis states: the product reads A[i*n + k] * B[k*n + j] and the store is C[i*n + j],
// with the column j following threadIdx.x (consecutive lanes read consecutive floats of B
// and write consecutive floats of C; the A element is the same for each half warp).
// Blocks of 16×16 threads (Table 2.3); n is a multiple of 16.
__global__ void mmgc(float *C, float *A, float *B, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[i * n + k] * B[k * n + j];
    C[i * n + j] = acc;
}
