// HONEST (CUDA): the two halves on two streams of its own, each joined back into the default stream with an event
// before solve returns, so all of the work lies between the harness's timing events.
#include <cuda_runtime.h>

__global__ void series(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    static cudaStream_t streams[2];
    static cudaEvent_t done[2];
    static bool made = false;
    if (!made) {
        made = true;
        for (int s = 0; s < 2; ++s) {
            cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking);
            cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming);
        }
    }
    if (N <= 0) return;
    int half = N / 2;
    int counts[2] = {half, N - half};
    cudaEvent_t ready;
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    cudaEventRecord(ready, 0);  // the streams start after whatever the default stream holds
    for (int s = 0; s < 2; ++s) {
        cudaStreamWaitEvent(streams[s], ready, 0);
        if (counts[s] > 0) {
            series<<<(counts[s] + 255) / 256, 256, 0, streams[s]>>>(x + s * half, y + s * half, counts[s]);
        }
        cudaEventRecord(done[s], streams[s]);
        cudaStreamWaitEvent(0, done[s], 0);
    }
    cudaEventDestroy(ready);
}
