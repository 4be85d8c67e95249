// fixture archs: sm_75 sm_90
// A doubly unrolled loop (docs/sass-import.md, "Unrolled loop and remainder"): nvcc unrolls
// the k loop (a run-time trip count n) by 4 into a 4-copy loop and a remainder loop, and
// ptxas unrolls the 4-copy loop by 4 again (16 copies, 4 copies, 1 copy). One FMA and two
// loads per source iteration.
__global__ void row_dot(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += a[i * n + k] * b[k];
    out[i] = acc;
}
