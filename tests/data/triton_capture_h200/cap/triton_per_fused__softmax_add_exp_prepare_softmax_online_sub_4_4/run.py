"""Re-run triton_per_fused__softmax_add_exp_prepare_softmax_online_sub_4 on the inputs captured during autotuning, timed by pytest_dcuopt's device timing."""
import sys
from pathlib import Path

from pytest_dcuopt.triton_flow.replay import main

sys.exit(main([str(Path(__file__).resolve().parent), *sys.argv[1:]]))
