// Nested loops: each thread sums a rows x cols window of a matrix; both loops are kept
// rolled (`#pragma unroll 1`) so the listing has an inner loop inside an outer one.
__global__ void window_sum(const float *m, float *out, int pitch, int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    #pragma unroll 1
    for (int r = 0; r < rows; ++r) {
        #pragma unroll 1
        for (int c = 0; c < cols; ++c)
            acc += m[(r + i) * pitch + c];
    }
    out[i] = acc;
}
