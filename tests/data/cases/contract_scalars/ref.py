"""Contract fixture: float scalars are drawn, not only their dims.json values. y = alpha * x + beta * z + eps with
alpha = beta = 1 and eps = 1e-5 by default: at those values alone, a kernel that swaps alpha and beta
(`swaps_alpha_beta`), ignores beta (`drops_beta`) or leaves eps out (`drops_eps`, under atol at 1e-5) computes
the right numbers. alpha and beta are drawn within a factor of 4 of their default; eps from its declared range.
"""

shapes = {"x": ("N",), "z": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 300), "eps": (-1.0, 1.0)}


def reference(x, z, y, alpha, beta, eps, N):
    y.copy_(alpha * x + beta * z + eps)
