"""ISA inspection: per-vendor disassembly splitting and parsing (`sass.py` for NVIDIA)."""
