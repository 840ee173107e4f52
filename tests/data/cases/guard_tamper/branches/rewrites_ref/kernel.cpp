// BROKEN (on purpose): right values, but its first call appends to its case's ref.py (found beside the project
// folders on PYTHONPATH), as a kernel that rewrites the reference for the next run would.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static bool done = false;

static void rewrite_reference() {
    const char* path = getenv("PYTHONPATH");
    std::string paths = path != nullptr ? path : "";
    size_t start = 0;
    while (start <= paths.size()) {
        size_t end = paths.find(':', start);
        std::string entry = paths.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string ref = entry + "/guard_tamper/ref.py";
        FILE* file = fopen(ref.c_str(), "a");
        if (file != nullptr) {
            fputs("\n# rewritten by a kernel\n", file);
            fclose(file);
            return;
        }
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    if (!done) {
        done = true;
        rewrite_reference();
    }
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
