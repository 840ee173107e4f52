"""Contract fixture: more than one input distribution. A row softmax timed on normal(0, 1) logits, whose ref.py
also declares `large_logits` (std 100: exp overflows float32 unless the row max is subtracted first) and `masked`
(a quarter of the logits -inf, as an attention mask leaves them). The baseline subtracts the row max and passes
every set; `no_max_subtraction` is right on normal(0, 1) logits only.
"""

import torch

shapes = {"x": ("M", "N"), "y": ("M", "N")}

dim_ranges = {"M": (1, 8), "N": (2, 64)}

inputs = {"x": ("normal", 0.0, 1.0)}

input_sets = {
    "large_logits": {"x": ("normal", 0.0, 100.0)},
    "masked": {"x": ("normal", 0.0, 1.0, {float("-inf"): 0.25})},
}


def reference(x, y, M, N):
    y.copy_(torch.softmax(x, dim=1))
