// A data-dependent loop: each thread counts the Collatz steps of its own value, so the
// trip count comes from the data, not from a launch parameter.
__global__ void collatz_steps(const unsigned *start, unsigned *steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned v = start[i];
    unsigned count = 0;
    while (v > 1u) {
        v = (v & 1u) ? 3u * v + 1u : v >> 1;
        ++count;
    }
    steps[i] = count;
}
