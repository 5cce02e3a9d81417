//===- watchdog.cc - --collective-timeout -------------------------*- C++ -*-===//
//
// See watchdog.h. The heartbeat table is /dev/shm/zeroc-hb-<hash of the
// job's id>, one 64-byte slot per rank: its pid, the steady clock of its
// last heartbeat (CLOCK_MONOTONIC, one clock for the whole node), and the
// count of collectives it entered. It is only ever read for a message.
//
//===----------------------------------------------------------------------===//

#include "train/watchdog.h"

#include "comm_internal.h"
#include "zeroc_rt/checksum.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc_rt::train {
namespace {

constexpr auto kTick = std::chrono::milliseconds(100);
/// A heartbeat older than this means the rank's process does not run.
constexpr double kStaleS = 1.0;
constexpr int kMaxWorld = 1 << 16;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The launcher's id of this job (Open MPI / PMIx), or "" (a singleton).
std::string jobId() {
  for (const char *name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})
    if (const char *v = std::getenv(name); v && *v)
      return v;
  return "";
}

} // namespace

struct Watchdog::Slot {
  std::atomic<int64_t> pid;
  std::atomic<int64_t> heartbeatNs;
  std::atomic<uint64_t> entered;
  std::atomic<int64_t> step;
  char pad[32];
};
static_assert(sizeof(std::atomic<int64_t>) == 8, "lock-free 64-bit atomics");

Watchdog::~Watchdog() { stop(); }

void Watchdog::openHeartbeats() {
  const std::string id = jobId();
  if (id.empty() || world > kMaxWorld)
    return;
  // The job id comes from the environment: only its hash names the file.
  char name[64];
  std::snprintf(name, sizeof name, "/zeroc-hb-%016llx",
                static_cast<unsigned long long>(
                    zeroc_rt_checksum64(id.data(), id.size())));
  int fd = ::shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  slotBytes = sizeof(Slot) * static_cast<size_t>(world);
  struct stat st;
  if (::fstat(fd, &st) != 0 ||
      (static_cast<size_t>(st.st_size) < slotBytes &&
       ::ftruncate(fd, static_cast<off_t>(slotBytes)) != 0)) {
    ::close(fd);
    return;
  }
  void *p = ::mmap(nullptr, slotBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED)
    return;
  slots = static_cast<Slot *>(p);
  slots[rank].heartbeatNs.store(nowNs(), std::memory_order_relaxed);
  slots[rank].pid.store(::getpid(), std::memory_order_relaxed);
  shmName = name;
}

void Watchdog::start(zeroc_rt_comm_t *c, double timeoutS) {
  comm = c;
  timeout = timeoutS;
  rank = zeroc_rt_comm_rank(c);
  world = zeroc_rt_comm_size(c);
  if (world <= 1 || timeoutS <= 0)
    return;
  openHeartbeats();
  thread = std::thread([this] { run(); });
}

void Watchdog::setStep(int64_t step) {
  currentStep.store(step, std::memory_order_relaxed);
  if (++stepsSeen == 2 && rank == 0 && !shmName.empty()) {
    ::shm_unlink(shmName.c_str());
    shmName.clear();
  }
}

void Watchdog::stop() {
  if (thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    thread.join();
  }
  if (slots) {
    slots[rank].pid.store(0, std::memory_order_relaxed);
    ::munmap(slots, slotBytes);
    slots = nullptr;
    if (rank == 0 && !shmName.empty())
      ::shm_unlink(shmName.c_str());
  }
}

void Watchdog::run() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!wake.wait_for(lock, kTick, [this] { return stopping; })) {
    const int64_t now = nowNs();
    if (slots) {
      slots[rank].heartbeatNs.store(now, std::memory_order_relaxed);
      slots[rank].entered.store(comm->entered.load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
      slots[rank].step.store(currentStep.load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
    }
    const char *name = comm->blockedIn.load(std::memory_order_acquire);
    if (!name)
      continue;
    const double waited =
        static_cast<double>(now - comm->blockedSinceNs.load(std::memory_order_relaxed)) *
        1e-9;
    if (waited > timeout)
      expire(name, waited);
  }
}

void Watchdog::expire(const char *name, double waitedS) {
  std::string peers;
  if (slots) {
    const int64_t now = nowNs();
    const uint64_t mine = comm->entered.load(std::memory_order_relaxed);
    for (int r = 0; r < world; ++r) {
      if (r == rank)
        continue;
      const int64_t pid = slots[r].pid.load(std::memory_order_relaxed);
      const int64_t beat = slots[r].heartbeatNs.load(std::memory_order_relaxed);
      if (pid == 0)
        continue; // not on this node, or finished
      const double silent = static_cast<double>(now - beat) * 1e-9;
      char line[256];
      if (silent > kStaleS)
        std::snprintf(line, sizeof line,
                      "%srank %d (pid %lld on this node) stopped responding "
                      "%.1f s ago (last seen at step %lld)",
                      peers.empty() ? "" : "; ", r, static_cast<long long>(pid),
                      silent, static_cast<long long>(slots[r].step.load()));
      else if (slots[r].entered.load(std::memory_order_relaxed) < mine)
        std::snprintf(line, sizeof line,
                      "%srank %d (pid %lld on this node) runs but has not "
                      "reached this collective (last seen at step %lld)",
                      peers.empty() ? "" : "; ", r, static_cast<long long>(pid),
                      static_cast<long long>(slots[r].step.load()));
      else
        continue;
      peers += line;
    }
  }
  if (peers.empty())
    peers = "no rank on this node stopped: look at the ranks of the other "
            "nodes";
  char when[64] = "before the first step";
  if (const int64_t step = currentStep.load(); step > 0)
    std::snprintf(when, sizeof when, "step %lld", static_cast<long long>(step));
  char text[2048];
  int n = std::snprintf(
      text, sizeof text,
      "rank %d: train: error: %s: %s waited %.1f s, past "
      "--collective-timeout %g: %s; ending this rank (exit 1) so that the "
      "launcher ends the job\n",
      rank, when, name, waitedS, timeout, peers.c_str());
  std::fflush(stdout);
  if (n > 0)
    (void)!::write(2, text, static_cast<size_t>(std::min<int>(n, sizeof text - 1)));
  ::_exit(1);
}

} // namespace zeroc_rt::train
