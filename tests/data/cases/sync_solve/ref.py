"""Fixture (CUDA): y = 2*x + 1, solved the ways code written elsewhere solves it. All branches are
correct; they differ in what `solve` does besides launching a kernel:

* baseline: launches one kernel and returns (asynchronous: timed with launch hiding, method "async");
* device_sync: launches, then cudaDeviceSynchronize() (the host waits inside the call: method "sync");
* temp_alloc: cudaMalloc's a temporary, two kernels through it, cudaFree (which waits for the device: "sync");
* d2d_copy: cudaMemcpy device-to-device of x into y, then a kernel in place (the host does not wait for a
  device-to-device cudaMemcpy, so it stays "async"; the copy is part of the call's device time);
* host_readback: launches, then cudaMemcpy's one output element to the host (a blocking copy: "sync");
* three_kernels: three kernels (y = 2x, y += 0.5, y += 0.5), then cudaDeviceSynchronize() ("sync");
* three_kernels_async: the same three kernels, no wait ("async").

dims.json puts the kernel well past 20 us on an H200 (2 x 128 MiB moved per kernel, about 80 us), where the harness
should agree with ncu within 3%; tools/device/sync_check.sh runs it there."""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 1 << 16)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
