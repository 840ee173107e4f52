// y = 2*x + 1 after a chain of dependent FMAs per element whose length sets the kernel's time (about 50-70 us on an
// H200 at N = 262144: one wave of threads, issue-bound); $DCUOPT_GATE_SLOW_PERCENT=p makes every chain p% longer
// (read once per process; unset: 0), so the kernel itself, not the launch around it, gets slower.
#include <cuda_runtime.h>
#include <cstdlib>

static const int BASE_STEPS = 8192;

static int chain_steps() {
    static const int steps = [] {
        const char* value = std::getenv("DCUOPT_GATE_SLOW_PERCENT");
        const double percent = value ? std::atof(value) : 0.0;
        return static_cast<int>(BASE_STEPS * (1.0 + percent / 100.0) + 0.5);
    }();
    return steps;
}

__global__ void affine_after_chain(const float* x, float* y, int n, int steps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    float acc = v;
    for (int k = 0; k < steps; ++k) {
        acc = fmaf(acc, 0.999999f, 1e-7f);
    }
    // acc stays finite for finite inputs, so this never stores acc; the compiler cannot know, so the chain stays.
    y[i] = (__float_as_uint(acc) == 0x7fc00001u) ? acc : 2.0f * v + 1.0f;
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    const int block = 256;
    affine_after_chain<<<(N + block - 1) / block, block>>>(x, y, N, chain_steps());
}
