"""ISA fixture: a HIP kernel forced to spill (64 live floats under a 32-VGPR cap), caught by the spill checks."""
import pytest

shapes = {"x": ("N",), "y": ("N",)}

pytestmark = [pytest.mark.isa(family="amdgcn", max_spills=0, forbid=["@scratch_traffic"],
                              reason="the kernel must keep its values in registers")]


def reference(x, y, N):
    raise NotImplementedError("ISA fixture: only test_isa_* runs on this case")
