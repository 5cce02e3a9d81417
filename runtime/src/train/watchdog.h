//===- watchdog.h - --collective-timeout ------------------------*- C++ -*-===//
//
// A rank whose peer died is ended by Open MPI (mpirun kills the job when a
// rank exits without MPI_Finalize). A peer that stopped responding (SIGSTOP,
// a hung node, a livelock) would leave every other rank blocked in a
// collective forever: the watchdog thread ends such a rank instead. It
// watches what the communicator's thread is blocked in (zeroc_rt_comm's
// blockedIn); past the timeout it writes one error line naming this rank,
// the step, the collective and how long it waited, and, from a heartbeat
// table in node-local shared memory that every rank's watchdog updates,
// the ranks on this node that stopped running; then it ends the process
// with exit code 1 (_exit: a thread blocked in MPI cannot be unwound), and
// mpirun ends the rest of the job. This is the runtime's one exit outside
// zeroc_rt_train_main's return, and only trainer processes run it.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_WATCHDOG_H
#define ZEROC_RT_SRC_TRAIN_WATCHDOG_H

#include "zeroc_rt/comm.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace zeroc_rt::train {

class Watchdog {
public:
  ~Watchdog();
  /// Starts watching `comm` (no thread for one rank or timeoutS <= 0).
  void start(zeroc_rt_comm_t *comm, double timeoutS);
  /// The optimizer step (1-based) the rank works on, for the message. At
  /// the second step every rank has mapped the heartbeat table (each one
  /// did before its first step's collectives), and rank 0 removes its name
  /// so that a job killed later leaves nothing in /dev/shm.
  void setStep(int64_t step);
  void stop();

private:
  struct Slot;
  void run();
  void expire(const char *name, double waitedS);
  void openHeartbeats();

  zeroc_rt_comm_t *comm = nullptr;
  double timeout = 0;
  int rank = 0, world = 1;
  std::atomic<int64_t> currentStep{0};
  Slot *slots = nullptr; ///< world entries in shared memory, or NULL
  size_t slotBytes = 0;
  std::string shmName;
  int stepsSeen = 0;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
};

} // namespace zeroc_rt::train

#endif // ZEROC_RT_SRC_TRAIN_WATCHDOG_H
