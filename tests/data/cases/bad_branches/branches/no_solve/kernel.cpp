extern "C" void other(const float* x, float* y, int N) {}
