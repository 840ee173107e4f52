// BROKEN (on purpose): leaves a daemon process behind (fork + setsid + fork), then computes y = 2*x + 1.
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static bool spawned = false;

static void leave_a_daemon() {
    pid_t middle = fork();
    if (middle != 0) {
        if (middle > 0) {
            waitpid(middle, nullptr, 0);
        }
        return;
    }
    setsid();
    if (fork() != 0) {
        _exit(0);
    }
    const char* path = getenv("DCUOPT_TEST_ESCAPE_PIDFILE");
    if (path != nullptr) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        char line[32];
        int length = snprintf(line, sizeof line, "%d\n", static_cast<int>(getpid()));
        if (fd >= 0 && write(fd, line, length) == length) {
            close(fd);
        }
    }
    for (;;) {
        pause();
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    if (!spawned) {
        spawned = true;
        leave_a_daemon();
    }
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
