// Grid-stride streaming kernels of the public Tesla V100 PCIe runs of te42kyfo/gpu-benches'
// cuda-stream (docs/validation.md, "The Volta grid-stride set"), written here from the
// kernels that benchmark's README lists: each thread walks 2^25 doubles a grid apart.

__global__ void gs_init(double *a, size_t n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = t; i < n; i += blockDim.x * gridDim.x)
        a[i] = 0.1;
}

// sum += b[i], kept from the compiler by a store no thread makes (t never equals 123123 here)
__global__ void gs_sum(double *a, const double *__restrict__ b, size_t n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    double s = 0.0;
    for (size_t i = t; i < n; i += blockDim.x * gridDim.x)
        s += b[i];
    if (t == 123123)
        a[t] = s;
}

__global__ void gs_dot(double *a, const double *__restrict__ b, const double *__restrict__ c,
                       size_t n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    double s = 0.0;
    for (size_t i = t; i < n; i += blockDim.x * gridDim.x)
        s += b[i] * c[i];
    if (t == 123123)
        a[t] = s;
}

__global__ void gs_scale(double *a, const double *__restrict__ b, size_t n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = t; i < n; i += blockDim.x * gridDim.x)
        a[i] = 0.2 * b[i];
}

__global__ void gs_triad(double *a, const double *__restrict__ b, const double *__restrict__ c,
                         size_t n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = t; i < n; i += blockDim.x * gridDim.x)
        a[i] = b[i] + 0.2 * c[i];
}

__global__ void gs_sch_triad(double *a, const double *__restrict__ b,
                             const double *__restrict__ c, const double *__restrict__ d,
                             size_t n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = t; i < n; i += blockDim.x * gridDim.x)
        a[i] = b[i] + c[i] * d[i];
}
