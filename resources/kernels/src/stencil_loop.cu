// fixture archs: sm_75 sm_80
// Loops whose loads re-read the sectors of their previous trips (the reuse across trips,
// core.kernel.sass.reuse): a 1-D convolution over a mask width known only at run time (nvcc
// unrolls the loop by 4 and adds a remainder loop; each trip's neighbour reads overlap the
// last trip's), and a column walk, whose loads move a whole row a trip and re-read nothing.

// out[o] = sum over k < mask_width of in[o - mask_width/2 + k] * mask[k], clamped to 0..1
__global__ void conv_rolled(const float *in, const float *mask, float *out, int mask_width,
                            int width)
{
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= width) return;
    int first = o - mask_width / 2;
    float acc = 0.0f;
    for (int k = 0; k < mask_width; ++k) {
        int x = first + k;
        if (x >= 0 && x < width)
            acc += in[x] * mask[k];
    }
    out[o] = fminf(fmaxf(acc, 0.0f), 1.0f);
}

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
