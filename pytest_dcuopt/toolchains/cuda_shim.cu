// Linked into every kernel the `cuda` toolchain builds (pytest_dcuopt/toolchains/cuda.py).
// nvcc links the CUDA runtime statically into each shared object, so the kernel's launch errors
// (cudaGetLastError) live in *its* copy of the runtime, not in torch's: these functions read them
// from the same copy. Sticky errors (an illegal address) are context-wide and visible here too.
//
// The sync hooks (see cuda_sync_hooks.h) live here too: events must be recorded and read by the same copy of
// the runtime as the kernel's own calls. One timed call, armed by dcuopt_sync_begin:
//   [delay kernel queued by the harness] S0 | solve's kernels | E1 (hook: right before the first wait) ...
//   after each wait returns: a spin kernel of `lead_cycles` (hides the host's next launches), then S1 | ... | E2
//   dcuopt_sync_end records the last E; dcuopt_sync_read gives the segments E_k - S_(k-1) in ms.
#include <cuda_runtime.h>
#include <time.h>

extern "C" {
int dcuopt_cuda_get_last_error(void) { return static_cast<int>(cudaGetLastError()); }
int dcuopt_cuda_device_synchronize(void) { return static_cast<int>(cudaDeviceSynchronize()); }
const char* dcuopt_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
const char* dcuopt_cuda_error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }
int dcuopt_cuda_runtime_version(void) {
    int version = 0;
    cudaRuntimeGetVersion(&version);
    return version;
}
}

// `.hip` builds compile this file together with the kernel (nvcc's `-x cu` applies to every input) and define
// DCUOPT_NO_SYNC_HOOKS: their solve() waits through HIP's inline wrappers, which the hooks cannot see, and the
// spin kernel would show up in the kernel's ptxas resource report.
#ifndef DCUOPT_NO_SYNC_HOOKS
namespace {
constexpr int kMaxMarks = 64;  // 32 segments: a solve that waits more often is timed by its first 31 waits
struct SyncMarks {
    bool armed = false;
    int count = 0;  // events recorded in this call (S0, E1, S1, E2, ...)
    long long lead_cycles = 0;
    double first_wait_host_s = -1.0;  // host seconds from dcuopt_sync_begin to the first hook
    double begin_host_s = 0.0;
    int waits = 0;
    cudaEvent_t events[kMaxMarks] = {};
    bool created = false;
};
SyncMarks marks;

double host_seconds() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

__global__ void dcuopt_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

void record(cudaStream_t stream) {
    if (marks.count < kMaxMarks) {
        cudaEventRecord(marks.events[marks.count++], stream);
    }
}

void before_wait(cudaStream_t stream) {  // an E mark: the device work queued so far ends here
    if (!marks.armed || marks.count % 2 == 0 || marks.count >= kMaxMarks - 1) return;
    if (marks.first_wait_host_s < 0) marks.first_wait_host_s = host_seconds() - marks.begin_host_s;
    marks.waits++;
    record(stream);
}

void after_wait() {  // an S mark behind a spin kernel, so the host's next launches are hidden again
    if (!marks.armed || marks.count % 2 == 1 || marks.count >= kMaxMarks - 1) return;
    dcuopt_spin<<<1, 1>>>(marks.lead_cycles);
    record(0);
}
}  // namespace

extern "C" {
// Arm the hooks and record S0 on the legacy default stream (behind the delay kernel the harness queued).
int dcuopt_sync_begin(long long lead_cycles) {
    if (!marks.created) {
        for (auto& event : marks.events) {
            if (cudaEventCreate(&event) != cudaSuccess) return 0;
        }
        marks.created = true;
    }
    marks.armed = true;
    marks.count = 0;
    marks.waits = 0;
    marks.lead_cycles = lead_cycles;
    marks.first_wait_host_s = -1.0;
    marks.begin_host_s = host_seconds();
    record(0);
    return 1;
}

// Disarm; record the last E when the call queued work after its last wait (or never waited). Returns the count.
int dcuopt_sync_end(void) {
    if (!marks.armed) return 0;
    if (marks.count % 2 == 1) record(0);
    marks.armed = false;
    return marks.count;
}

// Segments (ms) into `out`; returns how many, or -1 when an event could not be read.
int dcuopt_sync_read(float* out, int capacity, int* waits, double* first_wait_host_s) {
    if (marks.count < 2) return 0;
    if (cudaEventSynchronize(marks.events[marks.count - 1]) != cudaSuccess) return -1;
    int segments = 0;
    for (int k = 1; k < marks.count && segments < capacity; k += 2) {
        if (cudaEventElapsedTime(&out[segments], marks.events[k - 1], marks.events[k]) != cudaSuccess) return -1;
        segments++;
    }
    *waits = marks.waits;
    *first_wait_host_s = marks.first_wait_host_s;
    return segments;
}

cudaError_t dcuopt_hook_device_synchronize(void) {
    before_wait(0);
    cudaError_t result = cudaDeviceSynchronize();
    after_wait();
    return result;
}

cudaError_t dcuopt_hook_stream_synchronize(cudaStream_t stream) {
    before_wait(stream);
    cudaError_t result = cudaStreamSynchronize(stream);
    after_wait();
    return result;
}

cudaError_t dcuopt_hook_event_synchronize(cudaEvent_t event) {
    before_wait(0);
    cudaError_t result = cudaEventSynchronize(event);
    after_wait();
    return result;
}

cudaError_t dcuopt_hook_memcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    // A device-to-device copy does not make the host wait: it is device work of the call, not a wait.
    bool waits = kind != cudaMemcpyDeviceToDevice;
    if (waits) before_wait(0);
    cudaError_t result = cudaMemcpy(dst, src, count, kind);
    if (waits) after_wait();
    return result;
}

cudaError_t dcuopt_hook_free(void* pointer) {
    before_wait(0);
    cudaError_t result = cudaFree(pointer);
    after_wait();
    return result;
}
}
#endif  // DCUOPT_NO_SYNC_HOOKS
