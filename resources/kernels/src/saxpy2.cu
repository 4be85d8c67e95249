// Gajger 2017, Fig. 5.1: saxpy2, the thesis' worked example. The loop over `a`
// (the arithmetic intensity) is kept rolled, as in the thesis, by `#pragma unroll 1`.
__global__ void saxpy2(int n, int a, float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float t1 = x[i];
        float tmp = 0;
        #pragma unroll 1
        for (int cnt = 0; cnt < a; ++cnt) {
            tmp += t1;
        }
        y[i] += tmp;
    }
}
