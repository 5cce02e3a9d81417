//===- simt_emu.cc - The emulation's blocks of many threads ---------------===//
//
// With ZEROC_RT_CUDA_EMU_SIMT set, an emulated block runs the threads its
// launch asked for, each a fiber (ucontext) with a stack of its own, one at a
// time on the calling thread. The block runs a warp at a time: a warp's lanes
// run, each until it reaches a barrier (syncBlock), a warp shuffle, a warp
// gather or its end; when all 32 are at one shuffle (gather) the scheduler
// completes it and runs them on, until every lane is at the barrier or done.
// Then the next warp runs. When every warp has, and every thread left is at
// the barrier, they all run on. Anything else is a kernel that would hang or
// be undefined on a GPU, and fails the launch with what it was: a barrier
// some threads of the block returned before, a shuffle with lanes missing
// (the warp not full, or lanes elsewhere), more than 1024 threads, a thread
// that returned without waiting for its asynchronous copies.
//
// A kernel written for warps (a tensor-core product, zeroc_rt_cuda/mma.h) is
// launched with launchWarps (compat.h): its blocks run as fibers even
// without ZEROC_RT_CUDA_EMU_SIMT, since one thread cannot stand for a warp.
//
// Warps run in index order, and so do a warp's lanes, or both in the reverse
// with ZEROC_RT_CUDA_EMU_SIMT=reverse. A warp runs on as far as it can
// without the others (through its tensor-core products, which only its own
// lanes take part in), as a GPU may run it: a read of another warp's
// __shared__ write that lacks a barrier between them then reads a stale value
// in one order or the other, however many products apart the two are, and
// the kernel tests disagree with the CPU.
//
// An asynchronous copy (copyAsync16, cp.async) lands when its thread waits
// for it (waitCopies16), the latest a GPU may land it, so that a read that
// is not after the wait sees the old bytes.
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt_cuda/compat.h"

#include "streams_emu.h"

#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define ZEROC_RT_EMU_ASAN 1
#else
#define ZEROC_RT_EMU_ASAN 0
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace zeroc_rt::cuda::emu {

__thread int64_t currentBlock = 0, currentGrid = 1;
__thread int currentThread = 0, currentThreads = 1;

namespace {

enum class Mode { Single, Forward, Reverse };

Mode modeFromEnvironment() {
  const char *v = std::getenv("ZEROC_RT_CUDA_EMU_SIMT");
  if (!v || !*v || std::strcmp(v, "0") == 0)
    return Mode::Single;
  return std::strcmp(v, "reverse") == 0 ? Mode::Reverse : Mode::Forward;
}

Mode mode() {
  static const Mode m = modeFromEnvironment();
  return m;
}

constexpr int kWarp = 32;
constexpr int kMaxThreads = kMaxBlockThreads;
constexpr size_t kStackBytes = 128 << 10;

enum class At { Running, Barrier, Shuffle, Gather, Done };

/// An asynchronous copy that has not landed yet.
struct PendingCopy {
  void *dst;
  const void *src;
};

struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  At at = At::Done;
  uint64_t sent = 0, received = 0; ///< a shuffle's value out and in
  int laneMask = 0;
  const uint32_t *gatherFrom = nullptr; ///< a gather's words out and in
  uint32_t *gatherTo = nullptr;
  int gatherWords = 0;
  std::vector<PendingCopy> copies; ///< issued, not yet waited for
  void *fakeStack = nullptr;       ///< AddressSanitizer's, while swapped out
};

struct Block {
  ucontext_t scheduler;
  std::vector<Fiber> fibers;
  void (*body)(void *) = nullptr;
  void *context = nullptr;
  std::string violation;
};

thread_local Block block;

// AddressSanitizer keeps a stack's bounds (and its fake frames) per
// thread; each switch between the scheduler and a fiber tells it which
// stack runs next (its fiber API), or it reports the fibers' frames as
// errors. Nothing without AddressSanitizer.
#if ZEROC_RT_EMU_ASAN
thread_local const void *schedulerStack = nullptr;
thread_local size_t schedulerStackBytes = 0;
thread_local void *schedulerFakeStack = nullptr;
#endif

/// Before the running fiber's swap to the scheduler; `dying`: it returns
/// for good.
void leaveFiber(bool dying) {
#if ZEROC_RT_EMU_ASAN
  __sanitizer_start_switch_fiber(dying ? nullptr : &block.fibers[currentThread].fakeStack,
                                 schedulerStack, schedulerStackBytes);
#else
  (void)dying;
#endif
}

/// Where the running fiber starts, or continues after a swap.
void enterFiber() {
#if ZEROC_RT_EMU_ASAN
  __sanitizer_finish_switch_fiber(block.fibers[currentThread].fakeStack, &schedulerStack,
                                  &schedulerStackBytes);
#endif
}

/// The scheduler's swap to fiber `t` and back.
void runFiber(int t) {
#if ZEROC_RT_EMU_ASAN
  __sanitizer_start_switch_fiber(&schedulerFakeStack, block.fibers[t].stack.get(), kStackBytes);
#endif
  swapcontext(&block.scheduler, &block.fibers[t].context);
#if ZEROC_RT_EMU_ASAN
  __sanitizer_finish_switch_fiber(schedulerFakeStack, nullptr, nullptr);
#endif
}

/// The first fault the running block's threads made as they ran, if any: a
/// misaligned access, copies a thread never waited for.
thread_local std::string fault;

void noteFault(const std::string &text) {
  if (fault.empty())
    fault = text;
}

/// Whether the running block's threads are fibers.
thread_local bool fibers = false;

void fiberEntry() {
  enterFiber();
  block.body(block.context);
  Fiber &f = block.fibers[currentThread];
  if (!f.copies.empty())
    noteFault("thread " + std::to_string(currentThread) + " returned without waiting for " +
              std::to_string(f.copies.size()) + " asynchronous " +
              (f.copies.size() == 1 ? "copy" : "copies"));
  f.at = At::Done;
  leaveFiber(true);
  // Returning resumes uc_link, the scheduler.
}

/// Stops the running fiber at `at` until the scheduler runs it on.
void stopAt(At at) {
  Fiber &f = block.fibers[currentThread];
  f.at = at;
  leaveFiber(false);
  swapcontext(&f.context, &block.scheduler);
  enterFiber();
}

int fail(const char *format, int a, int b) {
  char text[256];
  std::snprintf(text, sizeof text, format, a, b);
  block.violation = "block " + std::to_string(currentBlock) + ": " + text;
  return 1;
}

/// Completes the shuffle or gather of warp `lo / 32` (lanes [lo, hi)) when
/// its lanes are all at one (the same one); 1 when it has lanes at one and
/// others elsewhere. *released: whether its lanes run on.
int completeWarp(int lo, int hi, bool *released) {
  int shuffling = 0, gathering = 0;
  for (int t = lo; t < hi; ++t) {
    shuffling += block.fibers[t].at == At::Shuffle;
    gathering += block.fibers[t].at == At::Gather;
  }
  *released = false;
  if (shuffling == 0 && gathering == 0)
    return 0;
  if (shuffling != kWarp && gathering != kWarp)
    return fail("a full-warp shuffle reached by %d lanes of warp %d "
                "(the block's threads are not a multiple of 32, or lanes "
                "returned or wait at a barrier)",
                shuffling + gathering, lo / kWarp);
  for (int t = lo; t < hi; ++t) {
    Fiber &f = block.fibers[t];
    if (gathering) {
      const int words = block.fibers[lo].gatherWords;
      if (f.gatherWords != words)
        return fail("a warp gather of %d words by one lane and of %d by another", f.gatherWords,
                    words);
      for (int l = 0; l < kWarp; ++l)
        std::memcpy(f.gatherTo + l * words, block.fibers[lo + l].gatherFrom,
                    sizeof(uint32_t) * words);
    } else {
      f.received = block.fibers[lo + ((t - lo) ^ (f.laneMask & (kWarp - 1)))].sent;
    }
    f.at = At::Running;
  }
  *released = true;
  return 0;
}

/// Runs the lanes [lo, hi) of a warp until each is at a barrier or done,
/// completing the warp's shuffles and gathers on the way; 1 when one fails.
int runWarp(int lo, int hi, bool reverse) {
  for (;;) {
    for (int k = lo; k < hi; ++k) {
      const int t = reverse ? hi - 1 - (k - lo) : k;
      if (block.fibers[t].at != At::Running)
        continue;
      currentThread = t;
      runFiber(t);
    }
    bool released = false;
    if (completeWarp(lo, hi, &released))
      return 1;
    if (!released)
      return 0;
  }
}

int runFibers(int threads) {
  if (threads < 1 || threads > kMaxThreads)
    return fail("a launch of %d threads per block (at most %d)", threads, kMaxThreads);
  if (block.fibers.size() < static_cast<size_t>(threads))
    block.fibers.resize(threads);
  for (int t = 0; t < threads; ++t) {
    Fiber &f = block.fibers[t];
    if (!f.stack)
      f.stack.reset(new char[kStackBytes]);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &block.scheduler;
    makecontext(&f.context, fiberEntry, 0);
    f.at = At::Running;
    f.copies.clear();
    f.fakeStack = nullptr;
  }
  const bool reverse = mode() == Mode::Reverse;
  const int warps = (threads + kWarp - 1) / kWarp;
  for (;;) {
    for (int k = 0; k < warps; ++k) {
      const int lo = (reverse ? warps - 1 - k : k) * kWarp;
      if (runWarp(lo, lo + kWarp < threads ? lo + kWarp : threads, reverse))
        return 1;
    }
    int done = 0;
    for (int t = 0; t < threads; ++t)
      done += block.fibers[t].at == At::Done;
    if (done == threads)
      return 0;
    if (done != 0)
      return fail("a barrier reached by %d of the block's %d threads (the "
                  "others returned)",
                  threads - done, threads);
    for (int t = 0; t < threads; ++t)
      block.fibers[t].at = At::Running;
  }
}

} // namespace

bool simt() { return mode() != Mode::Single; }

bool threadsRun() { return fibers; }

/// 1 when a thread of the block that ended made a fault (the violation
/// says which), else 0.
int checkFaults() {
  if (fault.empty())
    return 0;
  block.violation = "block " + std::to_string(currentBlock) + ": " + fault;
  fault.clear();
  return 1;
}

int runBlock(int launched, void (*body)(void *), void *context, bool warps) {
  zeroc_rt::cuda::emuNoteComputeWork();
  fault.clear();
  if (!simt() && !warps) {
    currentThreads = 1;
    currentThread = 0;
    body(context);
    return checkFaults();
  }
  currentThreads = launched;
  block.body = body;
  block.context = context;
  fibers = true;
  const int result = runFibers(launched);
  fibers = false;
  currentThread = 0;
  return result ? result : checkFaults();
}

void misalignedAccess(const void *p, int bytes) {
  if (!fault.empty()) // one is noted already: no need to format this one
    return;
  char text[160];
  std::snprintf(
      text, sizeof text, "thread %d: a %d-byte access at %p, %d bytes past a %d-byte boundary",
      currentThread, bytes, p,
      static_cast<int>(reinterpret_cast<uintptr_t>(p) % static_cast<unsigned>(bytes)), bytes);
  noteFault(text);
}

void copyAsync16(void *dst, const void *src) {
  checkAligned(dst, 16);
  checkAligned(src, 16);
  if (!fibers) { // one thread: nothing can read before it waits
    std::memcpy(dst, src, 16);
    return;
  }
  block.fibers[currentThread].copies.push_back(PendingCopy{dst, src});
}

void waitCopies16() {
  if (!fibers)
    return;
  std::vector<PendingCopy> &copies = block.fibers[currentThread].copies;
  for (const PendingCopy &c : copies)
    std::memcpy(c.dst, c.src, 16);
  copies.clear();
}

const char *violation() { return block.violation.c_str(); }

void barrier() {
  if (fibers)
    stopAt(At::Barrier);
}

uint64_t shuffleXor(uint64_t bits, int laneMask) {
  if (!fibers)
    return bits; // one thread: its own lane
  Fiber &f = block.fibers[currentThread];
  f.sent = bits;
  f.laneMask = laneMask;
  stopAt(At::Shuffle);
  return block.fibers[currentThread].received;
}

void warpGather(const uint32_t *mine, int words, uint32_t *all) {
  if (!fibers) { // one thread stands for no warp: launchWarps prevents this
    std::fprintf(stderr, "zeroc host emulation: a warp gather outside launchWarps\n");
    std::abort();
  }
  Fiber &f = block.fibers[currentThread];
  f.gatherFrom = mine;
  f.gatherTo = all;
  f.gatherWords = words;
  stopAt(At::Gather);
}

} // namespace zeroc_rt::cuda::emu
