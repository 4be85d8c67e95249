// A matrix-vector product with one thread per row (unsigned 32-bit), written here for the
// nvbench validation set (docs/validation.md): the lanes of a warp are a row apart and each
// walks its own row, the pattern of the runs it is compared with (loop1 = the row length).
__global__ void matvec_rows(unsigned *y, const unsigned *a, const unsigned *x, int rows,
                            int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    unsigned s = 0;
    for (int k = 0; k < cols; ++k)
        s += a[r * cols + k] * x[k];
    y[r] = s;
}
