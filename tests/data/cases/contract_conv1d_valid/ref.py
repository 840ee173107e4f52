"""Contract fixture: a "valid" 1-D convolution (correlation): out has input_size - kernel_size + 1 elements.

The output's shape is a function of the dims, and kernel_size's range is bounded by input_size (drawn first).
`full_length_output` writes input_size outputs (past the end of out); `misses_last_output` leaves the last one
unwritten.
"""

shapes = {
    "signal": ("input_size",),
    "taps": ("kernel_size",),
    "out": lambda input_size, kernel_size: (input_size - kernel_size + 1,),
}

dim_ranges = {"input_size": (1, 300), "kernel_size": (1, "input_size")}


def reference(signal, taps, out, input_size, kernel_size):
    windows = signal.unfold(0, kernel_size, 1)  # (input_size - kernel_size + 1, kernel_size)
    out.copy_(windows @ taps)
