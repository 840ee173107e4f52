// Linked into every kernel the `cuda` toolchain builds (pytest_dcuopt/toolchains/cuda.py).
// nvcc links the CUDA runtime statically into each shared object, so the kernel's launch errors
// (cudaGetLastError) live in *its* copy of the runtime, not in torch's: these functions read them
// from the same copy. Sticky errors (an illegal address) are context-wide and visible here too.
#include <cuda_runtime.h>

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
