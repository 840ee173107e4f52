// Force-included (nvcc -include) into every `.cu` kernel the `cuda` toolchain builds: the blocking CUDA calls a
// `solve` may make (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy, cudaFree)
// go through hooks in cuda_shim.cu. While the harness has armed them (timing.sync's hooked method), each hook
// records an event right before the call waits, so the device time of the kernels queued before it is measured
// by events (no profiler running, which slows kernels on some GPUs); disarmed, a hook is a plain call.
// A source that defines DCUOPT_NO_SYNC_HOOKS before any include is built without them.
#pragma once
#ifndef DCUOPT_NO_SYNC_HOOKS
#include <cuda_runtime.h>
extern "C" {
cudaError_t dcuopt_hook_device_synchronize(void);
cudaError_t dcuopt_hook_stream_synchronize(cudaStream_t stream);
cudaError_t dcuopt_hook_event_synchronize(cudaEvent_t event);
cudaError_t dcuopt_hook_memcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t dcuopt_hook_free(void* pointer);
}
#define cudaDeviceSynchronize() dcuopt_hook_device_synchronize()
#define cudaStreamSynchronize(stream) dcuopt_hook_stream_synchronize(stream)
#define cudaEventSynchronize(event) dcuopt_hook_event_synchronize(event)
#define cudaMemcpy(dst, src, count, kind) dcuopt_hook_memcpy(dst, src, count, kind)
#define cudaFree(pointer) dcuopt_hook_free(pointer)
#endif
