"""Fixture: y = 2*x. writes_junk_to_fds computes y right, then writes junk into every file descriptor from 3 to 63
(the harness's reply channel among them). forks_then_crashes forks a child that sleeps 30 s holding every inherited
descriptor, then crashes (SIGSEGV). Each must fail alone, with the reason named: a corrupted reply channel, and a
crash (not a timeout, although the child keeps the channel open); the baseline passes and the session goes on."""

shapes = {"x": ("N",), "y": ("N",)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x)
