"""GPU tests: need a CUDA device and built libraries.

Build first (on any machine with nvcc), then run where the GPU is:

    cutlass-splitk build configs/default.yaml -o build/default
    cutlass-splitk build configs/epilogues.yaml -o build/epilogues
    pytest -m gpu

``CUTLASS_SPLITK_BUILD_ROOT`` overrides the ``build/`` root.
"""

import pytest

from gpu_util import BUILD_ROOT, LIBS, gpu_skip_reason, manifest


def pytest_collection_modifyitems(config, items):
    reason = gpu_skip_reason()
    for item in items:
        if "gpu" in item.keywords and reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def libs():
    import cutlass_splitk

    return {lib: cutlass_splitk.load(BUILD_ROOT / lib) for lib in LIBS if manifest(lib) is not None}
