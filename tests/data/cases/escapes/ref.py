"""Fixture: y = 2*x + 1, computed right by every branch; two branches misbehave with processes.

- setsid_daemon: on its first call, leaves a daemon behind (fork, setsid, fork again, the middle process
  exits) that sleeps forever; it appends its pid to $DCUOPT_TEST_ESCAPE_PIDFILE when that is set. It has
  left the worker's process group and session: ending the group does not end it.
- daemon_then_hang: leaves the same daemon, then spins forever (for the SIGTERM/SIGKILL tests).
- kills_parent: kill(getppid(), SIGKILL), then sleeps 10 s.
  Must end its own worker, not the pytest session.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2000)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)
