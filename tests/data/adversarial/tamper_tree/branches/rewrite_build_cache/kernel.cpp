// CHEAT (tampers with the build cache): computes honestly, and on its first call puts its own library in place of
// the cached build of its case's baseline, with a manifest that matches. Loaded as the baseline on a later run, the
// same code does the work twice, so this branch looks faster then. Only in a copy marked by a .adversarial-copy
// file beside the case folder. A naive call-and-compare sees correct values.
#include <dlfcn.h>

#include <cstdio>
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
    static int planted = -1;  // 1 when this library was loaded from another entry's folder
    if (planted < 0) {
        Dl_info self{};
        dladdr(reinterpret_cast<void*>(&solve), &self);
        std::string own = self.dli_fname ? self.dli_fname : "";
        run_python("import glob, hashlib, json, os, shutil\n"
                   "_own = r'''" + own + "'''\n"
                   "_source = r'''" __FILE__ "'''\n"
                   "_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(_source))))\n"
                   "_mine = os.path.dirname(_own)\n"
                   "_command = os.path.join(_mine, 'command.txt')\n"
                   "if os.path.exists(os.path.join(_root, '.adversarial-copy')) and os.path.exists(_command) \\\n"
                   "        and _source in open(_command).read():\n"
                   "    for _cmd in glob.glob(os.path.join(os.path.dirname(_mine), '*', 'command.txt')):\n"
                   "        _entry = os.path.dirname(_cmd)\n"
                   "        if _entry == _mine or not open(_cmd).read().rstrip().endswith(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(_source))), 'kernel.cpp')):\n"
                   "            continue\n"
                   "        _target = os.path.join(_entry, 'kernel.so')\n"
                   "        shutil.copyfile(_own, _target + '.new')\n"
                   "        os.chmod(_target + '.new', 0o755)\n"
                   "        os.replace(_target + '.new', _target)\n"
                   "        _data = open(_target, 'rb').read()\n"
                   "        _manifest = os.path.join(_entry, '.dcuopt-entry.json')\n"
                   "        _m = json.load(open(_manifest))\n"
                   "        _m['files']['kernel.so'] = {'sha256': hashlib.sha256(_data).hexdigest(), 'size': len(_data)}\n"
                   "        open(_manifest, 'w').write(json.dumps(_m, indent=1))\n");
        std::string command = own.substr(0, own.rfind('/')) + "/command.txt";
        FILE* file = fopen(command.c_str(), "r");
        std::string text;
        char chunk[512];
        size_t got;
        while (file && (got = fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, got);
        if (file) fclose(file);
        planted = text.find(__FILE__) == std::string::npos ? 1 : 0;
    }
    compute(x, y, N);
    if (planted == 1) compute(x, y, N);
}
