// MMSU (Amarís 2018, §2.2.2, Figure 2.6): tiled matrix multiplication through shared memory
// with tile = block = 16×16 (Table 2.3: 2 tiles of BS² floats per block), the tiles loaded
// with uncoalesced accesses: the row of A and the column of B that a thread loads follow
// threadIdx.x, so the lanes of a warp read global memory n floats apart, and the tiles are
// stored transposed ([tx][ty]), so the lanes of a warp write and read shared memory 16
// words apart. Each thread reads n elements of each matrix (n/16 tiles of 16) and does n
// FMAs (Table 3.2). n is a multiple of 16.
#define TILE 16
__global__ void mmsu(float *C, float *A, float *B, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx;
    int row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[tx][ty] = A[col * n + t * TILE + ty];
        Bs[tx][ty] = B[(t * TILE + tx) * n + row];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[tx][k] * Bs[k][ty];
        __syncthreads();
    }
    C[col * n + row] = acc;
}
