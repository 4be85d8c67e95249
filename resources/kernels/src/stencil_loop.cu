// fixture archs: sm_75 sm_80
// A loop whose loads re-read nothing of their previous trips (the reuse across trips,
// core.kernel.sass.reuse): a column walk, whose loads move a whole row a trip, so their
// addresses have no fixed step. (The stencil whose trips do re-read is the validation
// set's 1-D convolution, resources/validation/kernels/nvbench/conv1d.cu.)

// sums[c] = the sum of column c of a rows x cols matrix, one thread per column
__global__ void column_sums(const float *m, float *sums, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    for (int r = 0; r < rows; ++r)
        s += m[r * cols + c];
    sums[c] = s;
}
