// Blackwell fifth-generation tensor cores (PTX tcgen05.mma, sm_100a): one thread issues an
// MMA whose shape and types sit in the instruction descriptor (a register), whose A and B
// operands are shared-memory matrix descriptors and whose accumulator lives in tensor
// memory. The kernel exists to show the SASS form (UTCHMMA, UTCQMMA, UTCIMMA) of each kind.
// fixture archs: sm_100a (tcgen05 needs the architecture-specific target)
#include <cstdint>

__global__ void tcgen05_mma(const uint64_t *desc, uint32_t *out)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
    __shared__ uint32_t taddr_s;
    if (threadIdx.x < 32)
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;"
                     :: "r"((uint32_t)__cvta_generic_to_shared(&taddr_s)));
    __syncthreads();
    uint32_t taddr = taddr_s;
    uint64_t da = desc[0], db = desc[1];
    uint32_t idesc = (uint32_t)desc[2], acc = (uint32_t)desc[3];
    if (threadIdx.x == 0) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                     "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p; }"
                     :: "r"(taddr), "l"(da), "l"(db), "r"(idesc), "r"(acc));
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                     "tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, p; }"
                     :: "r"(taddr), "l"(da), "l"(db), "r"(idesc), "r"(acc));
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                     "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p; }"
                     :: "r"(taddr), "l"(da), "l"(db), "r"(idesc), "r"(acc));
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %4, 0;\n"
                     "tcgen05.mma.cta_group::1.kind::i8 [%0], %1, %2, %3, p; }"
                     :: "r"(taddr), "l"(da), "l"(db), "r"(idesc), "r"(acc));
    }
    __syncthreads();
    out[threadIdx.x] = taddr;
    if (threadIdx.x < 32)
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" :: "r"(taddr));
#endif
}
