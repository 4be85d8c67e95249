// Large unrolled loops, as a tuned GEMM or stencil main loop compiles: eight loops, each
// unrolled 64 times over a body of four loads, 32 FMAs into four accumulators and a
// guarded integer update (a predicated IMAD, whose writes do not hide each other: every
// copy reaches the next iteration's uses), so the sm_90 listing has some 21 000
// instructions and 30 000 loop-carried edges. The SASS import's speed benchmark
// (benchmarks/bench_sass_real.py) reads that listing, unrolled_big.u64.sm_90.sass.gz, made by
// nvcc 13.0 and cuobjdump, and for the benchmark's growth figure the same kernel unrolled
// 8, 16 and 32 times (unrolled_big.u8.sm_90.sass.gz, ...):
//   nvcc -cubin -O3 -arch=sm_90 [-DUNROLL=8] unrolled_big.cu && cuobjdump -sass unrolled_big.cubin
#define LOAD4(p, s)                                                                 \
    float a0 = p[base + (s) * k], a1 = p[base + (s) * k + 1],                       \
          a2 = p[base + (s) * k + 2], a3 = p[base + (s) * k + 3];
#define FMA4(v)                                                                     \
    r0 = fmaf(a0, v, r0); r1 = fmaf(a1, v, r1); r2 = fmaf(a2, v, r2);               \
    r3 = fmaf(a3, v, r3); r0 = fmaf(r1, a2, r0); r2 = fmaf(r3, a0, r2);             \
    r1 = fmaf(r0, a3, r1); r3 = fmaf(r2, a1, r3);
#ifndef UNROLL
#define UNROLL 64
#endif
#define PRAGMA(x) _Pragma(#x)
#define UNROLLED(n) PRAGMA(unroll n)
#define LOOP(p, s, c0, c1, h)                                                       \
    UNROLLED(UNROLL)                                                                \
    for (int k = 0; k < n; ++k) {                                                   \
        LOAD4(p, s)                                                                 \
        FMA4(c0) FMA4(c1) FMA4(c0) FMA4(c1)                                         \
        if (a0 > t) h = h * 33u + (unsigned)k;                                      \
    }

__global__ void unrolled_big(const float *x, const float *y, float *out, unsigned *hash,
                             float c, float t, int n, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float r0 = 0.f, r1 = 1.f, r2 = 2.f, r3 = 3.f;
    unsigned h0 = 1, h1 = 2, h2 = 3, h3 = 4;
    for (int s = 0; s < steps; ++s) {
        int base = i + s * n;
        LOOP(x, 8, c, r3, h0)
        LOOP(y, 16, r0, c, h1)
        LOOP(x, 24, c, r1, h2)
        LOOP(y, 32, r2, c, h3)
        LOOP(x, 40, c, r0, h0)
        LOOP(y, 48, r3, c, h1)
        LOOP(x, 56, c, r2, h2)
        LOOP(y, 64, r1, c, h3)
        out[base] = r0 + r1;
    }
    out[i] = r0 + r1 + r2 + r3;
    hash[i] = h0 ^ h1 ^ h2 ^ h3;
}
