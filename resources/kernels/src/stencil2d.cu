// Two-dimensional stencils on an nx x ny float grid, one thread per point, a 2-D grid of 2-D
// blocks: each reads its point's neighbours in the rows above and below (in[i - nx],
// in[i + nx]), which the threads a row of blocks away read as their own point. jacobi5 is the
// 5-point Jacobi sweep, box9 the 9-point box average (three columns of three rows).
// fixture archs: sm_75 sm_80 sm_86 sm_90

__global__ void jacobi5(float *out, const float *in, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1) {
        int i = y * nx + x;
        out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
    }
}

__global__ void box9(float *out, const float *in, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1) {
        int i = y * nx + x;
        float s = 0.0f;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
                s += in[i + dy * nx + dx];
        out[i] = s * (1.0f / 9.0f);
    }
}
