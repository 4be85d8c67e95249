// Tensor-core shapes and types: one warp issues one mma.sync of each shape/type the target
// supports (PTX ISA "Warp-level matrix multiply-accumulate instructions", mma.sync.aligned),
// so the listings show the SASS form (HMMA/IMMA/DMMA/BMMA/QMMA...) of each.
#include <cstdint>

__global__ void mma_shapes(const uint32_t *in, float *outf, int *outi, double *outd)
{
    int t = threadIdx.x;
    uint32_t a0 = in[t], a1 = in[t + 32], a2 = in[t + 64], a3 = in[t + 96];
    uint32_t b0 = in[t + 128], b1 = in[t + 160];
    float f0 = 0.f, f1 = 0.f, f2 = 0.f, f3 = 0.f;
    int i0 = 0, i1 = 0, i2 = 0, i3 = 0;
    uint32_t h0 = 0, h1 = 0;
    // f16 x f16 -> f32, m16n8k8 (sm_75+)
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+f"(f0), "+f"(f1), "+f"(f2), "+f"(f3) : "r"(a0), "r"(a1), "r"(b0));
    // f16 x f16 -> f16, m16n8k8 (sm_75+)
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};"
                 : "+r"(h0), "+r"(h1) : "r"(a0), "r"(a1), "r"(b0));
    // s8 x s8 -> s32, m8n8k16 (sm_75+)
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+r"(i0), "+r"(i1) : "r"(a2), "r"(b1));
#if __CUDA_ARCH__ < 900
    // 4-bit and 1-bit shapes only where the tensor cores run them: from sm_90 on ptxas
    // emulates them (with 8-bit IMMA and integer code in called subroutines)
    // s4 x s4 -> s32, m8n8k32 (sm_75+)
    asm volatile("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+r"(i2), "+r"(i3) : "r"(a3), "r"(b0));
    // b1 XOR popc, m8n8k128 (sm_75+)
    asm volatile("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+r"(i0), "+r"(i1) : "r"(a1), "r"(b1));
#endif
#if __CUDA_ARCH__ < 800
    // f16 -> f32 and f16 -> f16, m8n8k4 (sm_70/75 natively; each quadpair of the warp
    // computes its own 8x8x4 product)
    {
        float g[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        uint32_t q[4] = {0, 0, 0, 0};
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%0,%1,%2,%3,%4,%5,%6,%7};"
                     : "+f"(g[0]), "+f"(g[1]), "+f"(g[2]), "+f"(g[3]), "+f"(g[4]), "+f"(g[5]), "+f"(g[6]), "+f"(g[7])
                     : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%0,%1,%2,%3};"
                     : "+r"(q[0]), "+r"(q[1]), "+r"(q[2]), "+r"(q[3]) : "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        f0 += g[0] + g[1] + g[2] + g[3] + g[4] + g[5] + g[6] + g[7];
        h0 ^= q[0] ^ q[1] ^ q[2] ^ q[3];
    }
#endif
#if __CUDA_ARCH__ >= 800
    // f16 -> f32, m16n8k16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f0), "+f"(f1), "+f"(f2), "+f"(f3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // bf16 -> f32, m16n8k16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f0), "+f"(f1), "+f"(f2), "+f"(f3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // tf32 -> f32, m16n8k8
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f0), "+f"(f1), "+f"(f2), "+f"(f3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // s8 -> s32, m16n8k32
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // u8 x s8 -> s32, m16n8k16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(a0), "r"(a1), "r"(b0));
#if __CUDA_ARCH__ < 900
    // s4 -> s32, m16n8k64
    asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // b1 AND popc, m16n8k256
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
    // f64, m8n8k4
    {
        double d0 = outd[t], d1 = outd[t + 32], da = outd[t + 64], db = outd[t + 96];
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(d0), "+d"(d1) : "d"(da), "d"(db));
        outd[t] = d0 + d1;
    }
#endif
#if __CUDA_ARCH__ >= 890
    // e4m3 x e4m3 -> f32, m16n8k32 (sm_89+)
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f0), "+f"(f1), "+f"(f2), "+f"(f3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    // e5m2 x e5m2 -> f16, m16n8k32 (sm_89+)
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(h0), "+r"(h1) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
    outf[t] = f0 + f1 + f2 + f3 + __uint_as_float(h0 ^ h1);
    outi[t] = i0 + i1 + i2 + i3;
}
