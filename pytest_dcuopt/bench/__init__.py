"""The benchmark stage: time a verified branch in its worker and hand the samples to pytest-benchmark."""
