// The textbook's basic 1-D convolution (one output per thread, the mask read each time),
// written here for the nvbench validation set (docs/validation.md): the runs it is compared
// with used the same access pattern. conv_basic reads the mask from global memory,
// conv_const from the constant bank. The mask width is known only at run time, so nvcc
// unrolls the loop by 4 and adds a remainder loop (loop1 = the mask width).
__constant__ float const_mask[64];

__global__ void conv_basic(const float *in, const float *mask, float *out, int mask_width,
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

__global__ void conv_const(const float *in, float *out, int mask_width, int width)
{
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    int first = o - mask_width / 2;
    for (int k = 0; k < mask_width; ++k) {
        int x = first + k;
        if (x >= 0 && x < width)
            acc += in[x] * const_mask[k];
    }
    out[o] = fminf(fmaxf(acc, 0.0f), 1.0f);
}
