// fixture archs: sm_75 sm_90
// An inner `#pragma unroll 4` loop in an outer loop (docs/sass-import.md, "Unrolled loop and
// remainder"): nvcc copies the body 4 times and leaves the cols mod 4 tail as straight code
// in the outer loop, so no remainder loop shows the unrolling. One load and one add per
// source iteration.
__global__ void window_rows(const float *m, float *out, int pitch, int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    #pragma unroll 1
    for (int r = 0; r < rows; ++r) {
        #pragma unroll 4
        for (int c = 0; c < cols; ++c)
            acc += m[(r + i) * pitch + c];
    }
    out[i] = acc;
}
