// Two kernels in one file (the importer then asks which one): a float4 vector add, whose
// 128-bit loads and stores span four registers each, and a templated scale whose name the
// listing gives mangled (_Z5scaleIfEvPT_S0_i) and demangled (void scale<float>(...)).
__global__ void vecadd4(float4 *a, const float4 *b, const float4 *c)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

template <typename T>
__global__ void scale(T *data, T factor, int n)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n)
        data[i] *= factor;
}

template __global__ void scale<float>(float *, float, int);
