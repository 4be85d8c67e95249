// MMSC (Amarís 2018, §2.2.2, Figure 2.6): tiled matrix multiplication through shared memory
// with tile = block = 16×16, the tiles loaded with coalesced accesses (consecutive lanes read
// consecutive floats of a row of A and of B) and read from shared memory row-wise (a
// broadcast of As, consecutive words of Bs). Each thread reads n elements of each matrix
// (n/16 tiles of 16) and does n FMAs (Table 3.2). n is a multiple of 16.
#define TILE 16
__global__ void mmsc(float *C, float *A, float *B, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx;
    int row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
