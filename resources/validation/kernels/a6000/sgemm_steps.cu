// Kernels of the public RTX A6000 runs of siboehm/SGEMM_CUDA (docs/validation.md, "The A6000
// set"), written here from the access patterns its article and runner describe: the same
// C = alpha * A * B + beta * C (row-major, M x K times K x N), step by step from one thread per
// element to register tiles. The launch shapes are the runner's; everything else is ours.

// One thread per element of C, 32 x 32 blocks, the row of C following threadIdx.x: a warp's
// lanes read 32 different rows of A (a sector each) and one element of B (broadcast).
__global__ void sgemm_rows_by_lane(int M, int N, int K, float alpha, const float *A,
                                   const float *B, float beta, float *C)
{
    unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * sum + beta * C[row * N + col];
}

// The same product with 1-D blocks of 32 * TILE threads, the column of C following the lane:
// a warp reads one element of A (broadcast) and 32 consecutive floats of B.
template <int TILE>
__global__ void sgemm_cols_by_lane(int M, int N, int K, float alpha, const float *A,
                                   const float *B, float beta, float *C)
{
    unsigned row = blockIdx.x * TILE + threadIdx.x / TILE;
    unsigned col = blockIdx.y * TILE + threadIdx.x % TILE;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * sum + beta * C[row * N + col];
}
template __global__ void sgemm_cols_by_lane<32>(int, int, int, float, const float *,
                                                const float *, float, float *);

// TILE x TILE tiles of A and B staged in shared memory, one element of C a thread
// (TILE * TILE threads in a 1-D block); no bounds checks, as in the runs.
template <int TILE>
__global__ void sgemm_smem_tiles(int M, int N, int K, float alpha, const float *A,
                                 const float *B, float beta, float *C)
{
    __shared__ float a_tile[TILE * TILE];
    __shared__ float b_tile[TILE * TILE];
    unsigned tr = threadIdx.x / TILE, tc = threadIdx.x % TILE;
    const float *a = A + blockIdx.x * TILE * K;
    const float *b = B + blockIdx.y * TILE;
    float *c = C + blockIdx.x * TILE * N + blockIdx.y * TILE;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        a_tile[tr * TILE + tc] = a[tr * K + tc];
        b_tile[tr * TILE + tc] = b[tr * N + tc];
        __syncthreads();
        a += TILE;
        b += TILE * N;
        for (int j = 0; j < TILE; ++j)
            sum += a_tile[tr * TILE + j] * b_tile[j * TILE + tc];
        __syncthreads();
    }
    c[tr * N + tc] = alpha * sum + beta * c[tr * N + tc];
}
template __global__ void sgemm_smem_tiles<32>(int, int, int, float, const float *, const float *,
                                              float, float *);

// A BM x BN tile of C a block, BM * BN / TM threads, each computing TM elements of one
// column of the tile from a BK-deep slice of A and B in shared memory.
template <int BM, int BN, int BK, int TM>
__global__ void sgemm_column_strips(int M, int N, int K, float alpha, const float *A,
                                    const float *B, float beta, float *C)
{
    __shared__ float a_tile[BM * BK];
    __shared__ float b_tile[BK * BN];
    unsigned tx = threadIdx.x;
    unsigned strip_col = tx % BN, strip_row = tx / BN;
    unsigned a_col = tx % BK, a_row = tx / BK;
    unsigned b_col = tx % BN, b_row = tx / BN;
    const float *a = A + blockIdx.y * BM * K;
    const float *b = B + blockIdx.x * BN;
    float *c = C + blockIdx.y * BM * N + blockIdx.x * BN;
    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += BK) {
        a_tile[a_row * BK + a_col] = a[a_row * K + a_col];
        b_tile[b_row * BN + b_col] = b[b_row * N + b_col];
        __syncthreads();
        a += BK;
        b += BK * N;
        for (int j = 0; j < BK; ++j) {
            float bv = b_tile[j * BN + strip_col];
            for (int t = 0; t < TM; ++t)
                acc[t] += a_tile[(strip_row * TM + t) * BK + j] * bv;
        }
        __syncthreads();
    }
    for (int t = 0; t < TM; ++t) {
        unsigned r = strip_row * TM + t;
        c[r * N + strip_col] = alpha * acc[t] + beta * c[r * N + strip_col];
    }
}
template __global__ void sgemm_column_strips<64, 64, 8, 8>(int, int, int, float, const float *,
                                                           const float *, float, float *);

// A BM x BN tile of C a block, BM * BN / (TM * TN) threads, each a TM x TN register tile
// (outer products of a column of A's slice and a row of B's).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void sgemm_register_tiles(int M, int N, int K, float alpha, const float *A,
                                     const float *B, float beta, float *C)
{
    constexpr int THREADS = BM * BN / (TM * TN);
    __shared__ float a_tile[BM * BK];
    __shared__ float b_tile[BK * BN];
    unsigned tx = threadIdx.x;
    unsigned t_col = tx % (BN / TN), t_row = tx / (BN / TN);
    unsigned a_col = tx % BK, a_row = tx / BK;
    unsigned b_col = tx % BN, b_row = tx / BN;
    constexpr int A_STEP = THREADS / BK, B_STEP = THREADS / BN;
    const float *a = A + blockIdx.y * BM * K;
    const float *b = B + blockIdx.x * BN;
    float *c = C + blockIdx.y * BM * N + blockIdx.x * BN;
    float acc[TM * TN] = {0.0f};
    float av[TM], bv[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int r = 0; r < BM; r += A_STEP)
            a_tile[(a_row + r) * BK + a_col] = a[(a_row + r) * K + a_col];
        for (int r = 0; r < BK; r += B_STEP)
            b_tile[(b_row + r) * BN + b_col] = b[(b_row + r) * N + b_col];
        __syncthreads();
        a += BK;
        b += BK * N;
        for (int j = 0; j < BK; ++j) {
            for (int i = 0; i < TM; ++i)
                av[i] = a_tile[(t_row * TM + i) * BK + j];
            for (int i = 0; i < TN; ++i)
                bv[i] = b_tile[j * BN + t_col * TN + i];
            for (int m = 0; m < TM; ++m)
                for (int n = 0; n < TN; ++n)
                    acc[m * TN + n] += av[m] * bv[n];
        }
        __syncthreads();
    }
    for (int m = 0; m < TM; ++m)
        for (int n = 0; n < TN; ++n) {
            unsigned r = t_row * TM + m, cc = t_col * TN + n;
            c[r * N + cc] = alpha * acc[m * TN + n] + beta * c[r * N + cc];
        }
}
template __global__ void sgemm_register_tiles<128, 128, 8, 8, 8>(int, int, int, float,
                                                                 const float *, const float *,
                                                                 float, float *);
