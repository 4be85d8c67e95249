// SFU-heavy kernel: fast-math intrinsics (MUFU.SIN/COS/EX2/LG2/RSQ/RCP) in a rolled loop.
__global__ void sfu_heavy(const float *x, float *y, int n, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    float acc = 0.0f;
    #pragma unroll 1
    for (int k = 0; k < iters; ++k) {
        acc += __sinf(v) * __cosf(v) + __expf(v) + __logf(v + 2.0f) + rsqrtf(v + 1.0f)
               + __fdividef(1.0f, v + 3.0f);
        v += 0.5f;
    }
    y[i] = acc;
}
