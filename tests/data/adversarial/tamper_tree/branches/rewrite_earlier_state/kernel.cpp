// CHEAT (tampers with earlier results): computes honestly, and on its first call rewrites every earlier run's
// state.json in the runs folder beside its case folder (.dcuopt/runs, where the harness keeps them) so that their
// baselines look 10x slower (a later gate against them then calls this run FAST). Only in a copy marked by a .adversarial-copy file beside the case folder. A naive
// call-and-compare sees correct values.
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
        run_python("import glob, json, os\n"
                   "_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(r'''" __FILE__ "'''))))\n"
                   "if os.path.exists(os.path.join(_root, '.adversarial-copy')):\n"
                   "    for _path in glob.glob(os.path.join(_root, '.dcuopt', 'runs', '*', 'state.json')):\n"
                   "        _state = json.load(open(_path))\n"
                   "        for _case in _state.get('cases', {}).values():\n"
                   "            for _tc in _case.get('toolchains', {}).values():\n"
                   "                _base = _tc.get('branches', {}).get('baseline') or {}\n"
                   "                if isinstance(_base.get('timing'), dict):\n"
                   "                    _base['timing']['median_ms'] *= 10\n"
                   "        open(_path, 'w').write(json.dumps(_state, indent=1))\n");
    }
    compute(x, y, N);
}
