// FP64 kernel: a double-precision axpy repeated `reps` times (DFMA chain, 64-bit loads).
__global__ void fp64_axpy(int n, int reps, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double xi = x[i];
        double yi = y[i];
        #pragma unroll 1
        for (int r = 0; r < reps; ++r)
            yi = a * xi + yi;
        y[i] = yi;
    }
}
