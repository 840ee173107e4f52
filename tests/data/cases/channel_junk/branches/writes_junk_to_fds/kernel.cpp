// BROKEN (on purpose): right values, then 64 bytes of junk (a huge length header, if read as one) into every file
// descriptor from 3 to 63, whatever they are: the harness's reply channel among them.
#include <unistd.h>

extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i];
    }
    unsigned char junk[64];
    for (int i = 0; i < 64; ++i) {
        junk[i] = 0xFF;
    }
    for (int fd = 3; fd < 64; ++fd) {
        ssize_t ignored = write(fd, junk, sizeof junk);
        (void)ignored;
    }
}
