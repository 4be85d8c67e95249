// Tensor-core kernel: one warp computes a 16x16 tile of C = A * B (half inputs, float
// accumulate) with the WMMA API, stepping over k in 16-wide slices (HMMA instructions).
#include <mma.h>
using namespace nvcuda;

__global__ void wmma_gemm(const half *A, const half *B, float *C, int n)
{
    int tile_row = blockIdx.y * 16, tile_col = blockIdx.x * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < n; k += 16) {
        wmma::load_matrix_sync(a, A + tile_row * n + k, n);
        wmma::load_matrix_sync(b, B + tile_col * n + k, n);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + tile_row * n + tile_col, acc, n, wmma::mem_row_major);
}
