// Evaluates NVIDIA's cuda_occupancy.h on launch configurations read from stdin, so the
// tests can compare gpumodeler's calculator against NVIDIA's. Test oracle only: gpumodeler
// does not use or copy this header's code or tables.
//
// Build: g++ -O2 -I/usr/local/cuda/include oracle.cpp -o oracle   (generate.py does this)
//
// `oracle props` prints the device description used for every compute capability.
// Otherwise stdin holds records of 10 native int64 values
//   major minor block_size registers dynamic_smem static_smem opt_in carveout cache gc
// (carveout: -1 or 0..100, cudaOccDeviceState::carveoutConfig; cache: cudaOccCacheConfig;
// opt_in, gc: 0/1) and stdout gets one record of 10 int64 values per input record:
//   status active_blocks limiting_factors limit_warps limit_regs limit_smem limit_blocks
//   allocated_regs allocated_smem gc_used
#include <cuda_occupancy.h>

#include <cstdio>
#include <cstring>

namespace {

// Per-SM limits, typed in from the CUDA C++ Programming Guide's "Technical Specifications per
// Compute Capability" / "Memory Information per Compute Capability" tables, independently of
// gpumodeler/core/compute_capability.py (the tests check the two transcriptions agree).
struct Device {
    int major, minor;
    int threads_per_sm;
    int regs_per_sm;
    int regs_per_block;
    int smem_per_sm_kib;      // maximum shared memory per SM
    int smem_per_block_kib;   // default per-block limit
    int smem_optin_kib;       // opt-in per-block maximum
    int reserved_bytes;       // shared memory the driver reserves per block
};

const Device kDevices[] = {
    {3, 5, 2048, 65536, 65536, 48, 48, 48, 0},
    {3, 7, 2048, 131072, 65536, 112, 48, 48, 0},
    {5, 0, 2048, 65536, 65536, 64, 48, 48, 0},
    {5, 2, 2048, 65536, 65536, 96, 48, 48, 0},
    {5, 3, 2048, 65536, 32768, 64, 48, 48, 0},
    {6, 0, 2048, 65536, 65536, 64, 48, 48, 0},
    {6, 1, 2048, 65536, 65536, 96, 48, 48, 0},
    {6, 2, 2048, 65536, 32768, 64, 48, 48, 0},
    {7, 0, 2048, 65536, 65536, 96, 48, 96, 0},
    {7, 2, 2048, 65536, 65536, 96, 48, 96, 0},
    {7, 5, 1024, 65536, 65536, 64, 48, 64, 0},
    {8, 0, 2048, 65536, 65536, 164, 48, 163, 1024},
    {8, 6, 1536, 65536, 65536, 100, 48, 99, 1024},
    {8, 7, 1536, 65536, 65536, 164, 48, 163, 1024},
    {8, 9, 1536, 65536, 65536, 100, 48, 99, 1024},
    {9, 0, 2048, 65536, 65536, 228, 48, 227, 1024},
    {10, 0, 2048, 65536, 65536, 228, 48, 227, 1024},
    {10, 3, 2048, 65536, 65536, 228, 48, 227, 1024},
    {11, 0, 1536, 65536, 65536, 228, 48, 227, 1024},
    {12, 0, 1536, 65536, 65536, 100, 48, 99, 1024},
    {12, 1, 1536, 65536, 65536, 100, 48, 99, 1024},
};

const Device* find(int major, int minor) {
    for (const Device& d : kDevices) {
        if (d.major == major && d.minor == minor) return &d;
    }
    return nullptr;
}

cudaOccDeviceProp props_of(const Device& d) {
    cudaOccDeviceProp p;
    p.computeMajor = d.major;
    p.computeMinor = d.minor;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = d.threads_per_sm;
    p.regsPerBlock = d.regs_per_block;
    p.regsPerMultiprocessor = d.regs_per_sm;
    p.warpSize = 32;
    p.sharedMemPerBlock = (size_t)d.smem_per_block_kib * 1024;
    p.sharedMemPerMultiprocessor = (size_t)d.smem_per_sm_kib * 1024;
    p.numSms = 1;
    p.sharedMemPerBlockOptin = (size_t)d.smem_optin_kib * 1024;
    p.reservedSharedMemPerBlock = (size_t)d.reserved_bytes;
    return p;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "props") == 0) {
        for (const Device& d : kDevices) {
            std::printf("%d.%d %d %d %d %d %d %d %d\n", d.major, d.minor, d.threads_per_sm,
                        d.regs_per_sm, d.regs_per_block, d.smem_per_sm_kib * 1024,
                        d.smem_per_block_kib * 1024, d.smem_optin_kib * 1024, d.reserved_bytes);
        }
        return 0;
    }
    long long in[10];
    while (std::fread(in, sizeof in, 1, stdin) == 1) {
        const int major = (int)in[0], minor = (int)in[1], block = (int)in[2];
        const int regs = (int)in[3], opt_in = (int)in[6], carveout = (int)in[7];
        const int cache = (int)in[8], gc = (int)in[9];
        const size_t dynamic_smem = (size_t)in[4], static_smem = (size_t)in[5];
        const Device* d = find(major, minor);
        if (!d) {
            std::fprintf(stderr, "no device %d.%d\n", major, minor);
            return 2;
        }
        cudaOccDeviceProp props = props_of(*d);
        cudaOccFuncAttributes attr;            // as converted from cudaFuncAttributes
        attr.maxThreadsPerBlock = 1024;
        attr.numRegs = regs;
        attr.sharedSizeBytes = static_smem;
        attr.partitionedGCConfig = gc ? PARTITIONED_GC_ON : PARTITIONED_GC_OFF;
        attr.shmemLimitConfig = opt_in ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
        // The opt-in: cudaFuncAttributeMaxDynamicSharedMemorySize set to the most it can be.
        attr.maxDynamicSharedSizeBytes = opt_in ? props.sharedMemPerBlockOptin - static_smem : 0;
        attr.numBlockBarriers = 1;
        cudaOccDeviceState state;
        state.carveoutConfig = carveout;
        state.cacheConfig = (cudaOccCacheConfig)cache;
        cudaOccResult result;
        std::memset(&result, 0, sizeof result);
        cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(
            &result, &props, &attr, &state, block, dynamic_smem);
        const long long out[10] = {
            (long long)status, result.activeBlocksPerMultiprocessor,
            (long long)result.limitingFactors, result.blockLimitWarps, result.blockLimitRegs,
            result.blockLimitSharedMem, result.blockLimitBlocks,
            result.allocatedRegistersPerBlock, (long long)result.allocatedSharedMemPerBlock,
            (long long)result.partitionedGCConfig};
        std::fwrite(out, sizeof out, 1, stdout);
    }
    return 0;
}
