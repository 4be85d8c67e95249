// Volkov 2016, Listing 3.4 (§3.8): the vector add kernel of the worked example.
__global__ void vecadd(float *a, const float *b, const float *c)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    a[i] = b[i] + c[i];
}
