# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "zeroc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "gen_models.py", "fuzz_import.py",
                   "expect_exit.py", "unit", "reference", "configs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zeroc_obj_root)

llvm_config.use_default_substitutions()
config.substitutions.append(("%models", config.zeroc_models_dir))
# Debian's interpreter, which has torch and onnx (lit's own %python is the
# one running lit).
config.substitutions.append(("%system-python", config.zeroc_python))
# mpirun with a private session directory, so that tests running at once do
# not race on Open MPI's shared one (see test/mpirun-isolated).
config.substitutions.append(
    ("%mpirun", "sh " + os.path.join(config.test_source_root, "mpirun-isolated")))
config.substitutions.append(
    ("%expect-exit", config.zeroc_python + " " +
     os.path.join(config.test_source_root, "expect_exit.py")))

tool_dirs = [config.zeroc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["zeroc", "zeroc-opt", "zeroc-translate"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# The CUDA toolkit (nvcc, cuBLASLt, NCCL) was found: --target cuda builds
# (test/Driver/compile-cuda.test). Nothing here needs a GPU.
if config.zeroc_have_cuda in ("ON", "1", "TRUE"):
    config.available_features.add("cuda-toolkit")

# CPU features a test needs (openblas-core.test: AVX2 + FMA kernels).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((l.split(":", 1)[1].split() for l in cpuinfo
                      if l.startswith("flags")), [])
except OSError:
    flags = []
if "avx2" in flags and "fma" in flags:
    config.available_features.add("cpu-avx2")

# Two CPUs this process may run on (test/e2e/launch-bind-cores.test binds a
# rank to each).
if len(os.sched_getaffinity(0)) >= 2:
    config.available_features.add("cpus-2")

# Network namespaces for the multi-node tests (test/e2e/launch-netns.test,
# over bench/netns.sh): root with iproute2, and a namespace can really be
# made here (a container without CAP_SYS_ADMIN / CAP_NET_ADMIN cannot).
import shutil as _shutil
import subprocess as _subprocess
if os.geteuid() == 0 and _shutil.which("ip"):
    _probe = "zeroc-lit-probe-%d" % os.getpid()
    if _subprocess.run(["ip", "netns", "add", _probe], capture_output=True).returncode == 0:
        _subprocess.run(["ip", "netns", "del", _probe], capture_output=True)
        config.available_features.add("netns")
