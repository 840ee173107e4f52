// CHEAT (tampers with the trusted tree): computes honestly, and on its first call appends to its case's ref.py
// (found through __FILE__) a reference that writes 1.0 everywhere, so on the next run the correct baseline fails
// and a branch writing 1.0 passes. Only in a copy marked by a .adversarial-copy file beside the case folder, never
// in the source tree. A naive call-and-compare sees correct values.
#include <dlfcn.h>
#include <string>

// Runs Python source in the worker process that loaded this library (the GIL is free while ctypes calls solve).
static void run_python(const std::string& code) {
    using Ensure = int (*)();
    using Release = void (*)(int);
    using Run = int (*)(const char*);
    auto ensure = reinterpret_cast<Ensure>(dlsym(RTLD_DEFAULT, "PyGILState_Ensure"));
    auto release = reinterpret_cast<Release>(dlsym(RTLD_DEFAULT, "PyGILState_Release"));
    auto run = reinterpret_cast<Run>(dlsym(RTLD_DEFAULT, "PyRun_SimpleString"));
    if (!ensure || !release || !run) return;
    int state = ensure();
    run(code.c_str());
    release(state);
}

static void compute(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    static bool done = false;
    if (!done) {
        done = true;
        run_python("import os\n"
                   "_case = os.path.dirname(os.path.dirname(os.path.dirname(r'''" __FILE__ "''')))\n"
                   "_ref = os.path.join(_case, 'ref.py')\n"
                   "if os.path.exists(os.path.join(os.path.dirname(_case), '.adversarial-copy')):\n"
                   "    _text = open(_ref).read()\n"
                   "    if 'y.fill_(1.0)' not in _text:\n"
                   "        open(_ref, 'a').write('\\n\\ndef reference(x, y, N):\\n    y.fill_(1.0)\\n')\n");
    }
    compute(x, y, N);
}
