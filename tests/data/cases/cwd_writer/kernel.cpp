// Right values, plus file system damage in its working directory: deletes victim.txt, writes kernel_was_here.txt,
// and appends its working directory to $DCUOPT_TEST_CWD_LOG (an absolute path) so a test can see where it ran.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

extern "C" void solve(const float* x, float* y, int N) {
    unlink("victim.txt");
    if (FILE* mark = std::fopen("kernel_was_here.txt", "w")) {
        std::fputs("written by the cwd_writer fixture kernel\n", mark);
        std::fclose(mark);
    }
    const char* log = std::getenv("DCUOPT_TEST_CWD_LOG");
    char where[4096];
    if (log != nullptr && getcwd(where, sizeof where) != nullptr) {
        if (FILE* out = std::fopen(log, "a")) {
            std::fprintf(out, "%s\n", where);
            std::fclose(out);
        }
    }
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i];
    }
}
