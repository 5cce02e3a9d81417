//===- blas_core.cc - OpenBLAS kernels that match the CPU -------*- C++ -*-===//
//
// OpenBLAS (DYNAMIC_ARCH) picks its kernels once, when it loads, from the
// CPU's vendor, family and model. A CPU it does not know — a new model, or
// a virtual machine that reports a generic one — gets its Prescott (SSE3)
// kernels: issue 10 measured a GPT-2-small step 2.3-2.7x slower that way on
// a VM whose CPU has AVX-512. The choice cannot be changed once the library
// is loaded, so before MPI starts the trainer re-executes itself with
// OPENBLAS_CORETYPE naming the kernels the CPU's features allow (SkylakeX
// for AVX-512 F/BW/DQ/VL, Haswell for AVX2 + FMA), once. A user's own
// OPENBLAS_CORETYPE is always kept.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include <cblas.h>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace zeroc_rt::train {
namespace {

constexpr const char *kReexecVar = "ZEROC_RT_OPENBLAS_REEXEC";
/// For tests: the core name to treat as OpenBLAS's own choice.
constexpr const char *kAssumeVar = "ZEROC_RT_ASSUME_OPENBLAS_CORE";

CpuFeatures hostFeatures() {
  CpuFeatures f;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
  return f;
}

} // namespace

const char *betterOpenBlasCore(const std::string &chosen, const CpuFeatures &cpu) {
  // OpenBLAS's x86-64 cores without AVX2 kernels: what it falls back to.
  static const char *const kOld[] = {
      "Prescott", "Core2",    "Penryn",     "Dunnington", "Nehalem",
      "Atom",     "Katmai",   "Coppermine", "Northwood",  "Banias",
      "Opteron",  "Opteron(SSE3)", "Barcelona", "Bobcat", "Sandybridge",
      "Bulldozer", "Piledriver", "Nano", "Unknown", ""};
  bool old = false;
  for (const char *name : kOld)
    old |= chosen == name;
  if (!old)
    return nullptr;
  if (cpu.avx512)
    return "SkylakeX";
  if (cpu.avx2 && cpu.fma)
    return "Haswell";
  return nullptr;
}

void reexecWithMatchingBlas(int argc, char **argv) {
  if (argc < 1 || !argv || std::getenv("OPENBLAS_CORETYPE") || std::getenv(kReexecVar))
    return;
  const char *assumed = std::getenv(kAssumeVar);
  const char *own = openblas_get_corename();
  const std::string chosen = assumed ? assumed : own ? own : "";
  const char *better = betterOpenBlasCore(chosen, hostFeatures());
  if (!better)
    return;
  if (::setenv("OPENBLAS_CORETYPE", better, 1) != 0 ||
      ::setenv(kReexecVar, chosen.empty() ? "unknown" : chosen.c_str(), 1) != 0)
    return;
  ::execv("/proc/self/exe", argv);
  // exec failed: run on with OpenBLAS's own kernels.
  ::unsetenv("OPENBLAS_CORETYPE");
  ::unsetenv(kReexecVar);
}

std::string blasCoreNote() {
  const char *was = std::getenv(kReexecVar);
  const char *now = openblas_get_corename(); // what it runs now, as loaded
  if (!was || !now || !std::getenv("OPENBLAS_CORETYPE"))
    return "";
  return format("zeroc train: OpenBLAS chose its %s kernels for this CPU; "
                "running its %s kernels, which the CPU's features allow "
                "(set OPENBLAS_CORETYPE yourself to choose)",
                was, now);
}

} // namespace zeroc_rt::train
