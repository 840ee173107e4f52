// BROKEN (on purpose): computes nothing. On its first call it takes the GIL through the CPython C API (the worker that
// loaded it is a Python process) and replaces the worker's snapshot with one that holds no outputs and no problems
// and says it was already verified: under a design where the worker's word counts, it passes everything.
#include <dlfcn.h>

typedef int (*gil_ensure_t)(void);
typedef void (*gil_release_t)(int);
typedef int (*run_string_t)(const char*);

static const char* FORGERY =
    "import pytest_dcuopt.toolchains.binding as _b, pytest_dcuopt.toolchains.cabi_binding as _c\n"
    "def _forged(self, *args, **kwargs):\n"
    "    forged = _b.Snapshot({}, {}, {p.name: p.dtype for p in self.params}, [])\n"
    "    forged.verified = True\n"
    "    return forged\n"
    "_c.CAbiBinding.snapshot = _forged\n";

static bool forged = false;

extern "C" void solve(const float* x, float* y, int N) {
    (void)x;
    (void)y;
    (void)N;
    if (forged) {
        return;
    }
    forged = true;
    void* self = dlopen(nullptr, RTLD_NOW);
    gil_ensure_t ensure = reinterpret_cast<gil_ensure_t>(dlsym(self, "PyGILState_Ensure"));
    gil_release_t release = reinterpret_cast<gil_release_t>(dlsym(self, "PyGILState_Release"));
    run_string_t run = reinterpret_cast<run_string_t>(dlsym(self, "PyRun_SimpleString"));
    if (ensure && release && run) {
        int state = ensure();
        run(FORGERY);
        release(state);
    }
}
