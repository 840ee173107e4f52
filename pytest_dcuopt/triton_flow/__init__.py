"""The Triton investigation workflow (`dcuopt triton ...`, docs/triton.md): from a `torch.compile` model to a
decision about its hot generated kernel.

Modules, one per step: environment (what the machine has), capture (TorchInductor autotuning recorded to a
folder, switched on explicitly), summarize (the autotune records and Inductor's own log to JSON/Markdown),
artifacts (Inductor's per-kernel files collected by name), hints (signature, pointer hints, tl.assume /
tl.multiple_of / atomics), scan (load/store families and widths, atomics, matrix ops, waits: read with the ISA
package's parsers and signature registry), replay (a captured kernel re-run and timed by the harness's device
timing), fallback (the model timed compiled vs with the hot region under torch._dynamo.disable), report (the
investigation's output contract) and to_case (a captured kernel as a harness case).

torch and triton are imported inside the functions that need them, never at module level.

Stable: the modules in `__all__`.
"""

__all__ = ["capture", "report", "to_case"]  # the stable submodules; the others may change
