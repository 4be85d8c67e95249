// Matrix products of unsigned 32-bit matrices, written here for the nvbench validation set
// (docs/validation.md) from the access patterns of the runs they are compared with:
// C (rows1 x cols2) = A (rows1 x cols1) * B (rows2 x cols2), cols1 = rows2.

// One thread per element of C: the lanes of a warp share a row of C and sit a column apart,
// so each step reads one element of A for the whole warp and a contiguous run of B's row
// (loop1 = cols1, the length of the inner product).
__global__ void matmul_naive(const unsigned *a, const unsigned *b, unsigned *c, int rows1,
                             int cols1, int rows2, int cols2)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows1 || col >= cols2) return;
    unsigned s = 0;
    for (int k = 0; k < cols1; ++k)
        s += a[row * cols1 + k] * b[k * cols2 + col];
    c[row * cols2 + col] = s;
}

// The textbook's tiled product: a square block of threads copies a tile of A and a tile of B
// into dynamic shared memory (the tile width is blockDim.x, known only at run time, so the
// launch passes 2 * width * width words), waits, accumulates over the tile, and waits again
// before the next phase. Loads outside a matrix write 0 so the last phase needs no special
// case (the outer loop runs ceil(cols1 / width) phases, the inner one width steps).
__global__ void matmul_tiled(const unsigned *a, const unsigned *b, unsigned *c, int rows1,
                             int cols1, int rows2, int cols2)
{
    extern __shared__ unsigned tiles[];
    const int w = blockDim.x;
    unsigned *ta = tiles;
    unsigned *tb = tiles + w * w;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * w + ty;
    const int col = blockIdx.x * w + tx;
    const int phases = (cols1 + w - 1) / w;
    unsigned s = 0;
    for (int p = 0; p < phases; ++p) {
        int ka = p * w + tx;  // column of A this thread copies
        int kb = p * w + ty;  // row of B this thread copies
        ta[ty * w + tx] = (row < rows1 && ka < cols1) ? a[row * cols1 + ka] : 0u;
        tb[ty * w + tx] = (kb < rows2 && col < cols2) ? b[kb * cols2 + col] : 0u;
        __syncthreads();
        for (int k = 0; k < w; ++k)
            s += ta[ty * w + k] * tb[k * w + tx];
        __syncthreads();
    }
    if (row < rows1 && col < cols2)
        c[row * cols2 + col] = s;
}
