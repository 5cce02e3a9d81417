//===- streams_emu.cc - The host emulation's streams and events -----------===//
//
// The compute stream (NULL) runs its work at once; the communication stream
// holds its work until something waits for it (streams_emu.h). Every piece
// of held work and every event recorded there gets a ticket, in queue order;
// a wait for an event runs the held work up to the event's ticket.
//
//===----------------------------------------------------------------------===//

#include "streams_emu.h"
#include "gpu.h"

#include "status_internal.h"

#include <chrono>
#include <deque>
#include <memory>
#include <string>

namespace zeroc_rt::cuda {
namespace {

using Clock = std::chrono::steady_clock;

/// What a recorded event knows: when it completed, or the ticket of the
/// held record it waits for. Shared with that record, which may run after
/// the event is destroyed (CUDA lets a program destroy a pending event).
struct EventState {
  Clock::time_point at = Clock::now();
  uint64_t computeWork = 0; ///< the compute stream's work before it, if recorded there
  uint64_t ticket = 0; ///< the last record's, while pending
  bool pending = false;
};
struct Event {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

struct Held {
  uint64_t ticket;
  StreamWork work;
};

class CommStream {
public:
  /// The ticket the next held work gets.
  uint64_t next() const { return issued + 1; }
  void hold(StreamWork work) { held.push_back({++issued, std::move(work)}); }

  /// Runs the held work with tickets up to `ticket`, in order. After a
  /// failure nothing more runs: the failure is every later wait's status.
  zeroc_rt_status_t runThrough(uint64_t ticket) {
    // The host now waits for the communication stream's collectives, as a
    // GPU's host waits: the watcher marks the wait for the
    // --collective-timeout watchdog (a peer that never joins).
    const bool waits = watcher && failed.empty() && !held.empty() && held.front().ticket <= ticket;
    if (waits)
      watcher->begin();
    zeroc_rt_status_t status = nullptr;
    while (failed.empty() && !held.empty() && held.front().ticket <= ticket) {
      StreamWork work = std::move(held.front().work);
      held.pop_front();
      if ((status = work())) {
        failed = zeroc_rt_status_message(status);
        break;
      }
    }
    if (waits)
      watcher->end();
    if (status)
      return status;
    if (!failed.empty())
      return ZEROC_RT_ERROR(ZEROC_RT_COMM_ERROR,
                            "host emulation: the communication stream stopped at "
                            "an earlier failure: %s",
                            failed.c_str());
    return nullptr;
  }
  zeroc_rt_status_t drain() { return runThrough(issued); }

  HostWaitWatcher *watcher = nullptr;
  /// The compute stream's work this stream has waited for (a count).
  uint64_t computeSeen = 0;

private:
  std::deque<Held> held;
  uint64_t issued = 0;
  std::string failed;
};

/// The compute stream's work so far (a count).
uint64_t computeWork = 0;

CommStream &commQueue() {
  static CommStream stream;
  return stream;
}

EventState &stateOf(void *event) { return *static_cast<Event *>(event)->state; }

/// Runs the communication stream up to `event`'s record, if it is pending.
zeroc_rt_status_t complete(void *event) {
  EventState &e = stateOf(event);
  if (!e.pending)
    return nullptr;
  return commQueue().runThrough(e.ticket);
}

} // namespace

void *computeStream() { return nullptr; }
void *commStream() { return &commQueue(); }

bool emuHolds(const void *stream) { return stream && stream == commStream(); }

zeroc_rt_status_t emuStreamRun(void *stream, StreamWork work) {
  if (!emuHolds(stream))
    return work();
  commQueue().hold(std::move(work));
  return nullptr;
}

zeroc_rt_status_t emuDrainCommStream() { return commQueue().drain(); }

void setHostWaitWatcher(HostWaitWatcher *watcher) { commQueue().watcher = watcher; }

void emuNoteComputeWork() { ++computeWork; }

zeroc_rt_status_t emuCheckCommAfterCompute(const char *what) {
  const uint64_t seen = commQueue().computeSeen;
  if (seen == computeWork)
    return nullptr;
  return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL,
                        "host emulation: %s was queued on the communication stream without "
                        "waiting for the compute stream's last %llu operation(s): on a GPU it "
                        "may run before the kernels that write its operands",
                        what, static_cast<unsigned long long>(computeWork - seen));
}

zeroc_rt_status_t gpuStreamSynchronize(void *stream, const char *) {
  return emuHolds(stream) ? emuDrainCommStream() : nullptr;
}

zeroc_rt_status_t gpuEventCreate(void **event) {
  *event = new Event;
  return nullptr;
}
zeroc_rt_status_t gpuTimedEventCreate(void **event) { return gpuEventCreate(event); }
void gpuEventDestroy(void *event) { delete static_cast<Event *>(event); }

zeroc_rt_status_t gpuEventRecord(void *event, void *stream) {
  std::shared_ptr<EventState> e = static_cast<Event *>(event)->state;
  if (!emuHolds(stream)) {
    e->at = Clock::now();
    e->pending = false;
    e->computeWork = computeWork;
    return nullptr;
  }
  // Completes when the communication stream gets to it, unless the event
  // was recorded again meanwhile (a wait then waits for the later record).
  const uint64_t ticket = commQueue().next();
  e->ticket = ticket;
  e->pending = true;
  e->computeWork = 0; // says nothing of the compute stream's work
  commQueue().hold([e, ticket]() -> zeroc_rt_status_t {
    if (e->ticket == ticket) {
      e->at = Clock::now();
      e->pending = false;
    }
    return nullptr;
  });
  return nullptr;
}

zeroc_rt_status_t gpuStreamWait(void *stream, void *event) {
  // The communication stream runs its work in order and the compute
  // stream's events are complete when recorded: only the compute stream
  // (and so the host) can have to wait. The communication stream has seen
  // the compute stream's work before a compute event it waits for.
  if (!emuHolds(stream))
    return complete(event);
  const EventState &e = stateOf(event);
  if (!e.pending && e.computeWork > commQueue().computeSeen)
    commQueue().computeSeen = e.computeWork;
  return nullptr;
}

zeroc_rt_status_t gpuEventSynchronize(void *event) { return complete(event); }

zeroc_rt_status_t gpuEventElapsed(void *from, void *to, float *ms) {
  const EventState &a = stateOf(from), &b = stateOf(to);
  if (a.pending || b.pending)
    return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL,
                          "host emulation: the time between two events of which one "
                          "has not completed (cudaErrorNotReady on a GPU)");
  *ms = std::chrono::duration<float, std::milli>(b.at - a.at).count();
  return nullptr;
}

} // namespace zeroc_rt::cuda
