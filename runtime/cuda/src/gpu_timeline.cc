//===- gpu_timeline.cc - --trace's GPU timeline ---------------------------===//
//
// The host's --trace spans say when the host queued work; on a GPU the
// work runs later, on two streams. While the timeline is on, a timed event
// marks each op's start on the compute stream and each collective's start
// and end on the communication stream; gpuTimelineTake turns the completed
// marks into spans on the host's clock: the origin is an event recorded
// on an idle GPU (after a synchronize) at a known host time, and each mark
// is that time plus the event's elapsed time from the origin (recorded
// again at each take, so that the elapsed times stay short). Events are
// reused once taken. On the emulation a timed event completes when it is
// recorded, so the timeline is the host's own.
//
//===----------------------------------------------------------------------===//

#include "gpu.h"

#include "status_internal.h"

namespace zeroc_rt::cuda {
namespace {

struct Mark {
  void *event;
  int stream;
  const char *name; ///< compute: the op starting here (NULL: none); comm: the collective
  bool begin;
};

struct Timeline {
  bool on = false;
  void *origin = nullptr;
  std::chrono::steady_clock::time_point originHost;
  std::vector<void *> pool;
  std::vector<Mark> marks;
  zeroc_rt_status_t error = nullptr; ///< the first failure to record a mark
};

Timeline &timeline() {
  static Timeline t;
  return t;
}

/// Keeps the first failure to record a mark for gpuTimelineTake.
void keepFirstError(Timeline &t, zeroc_rt_status_t s) {
  if (!t.error)
    t.error = s;
  else
    zeroc_rt_status_free(s);
}

/// Records a mark on `stream`'s GPU stream; a failure is kept for
/// gpuTimelineTake (the callers cannot return one).
void mark(int stream, const char *name, bool begin) {
  Timeline &t = timeline();
  void *event = nullptr;
  if (!t.pool.empty()) {
    event = t.pool.back();
    t.pool.pop_back();
  } else if (zeroc_rt_status_t s = gpuTimedEventCreate(&event)) {
    return keepFirstError(t, s);
  }
  if (zeroc_rt_status_t s = gpuEventRecord(event, stream ? commStream() : computeStream())) {
    t.pool.push_back(event);
    return keepFirstError(t, s);
  }
  t.marks.push_back({event, stream, name, begin});
}

/// Records the origin on the idle GPU: its host time is the middle of the
/// host's readings before the record and after the event completed.
zeroc_rt_status_t anchor(Timeline &t) {
  ZEROC_RT_RETURN_IF_ERROR(gpuSynchronize());
  const auto before = std::chrono::steady_clock::now();
  ZEROC_RT_RETURN_IF_ERROR(gpuEventRecord(t.origin, computeStream()));
  ZEROC_RT_RETURN_IF_ERROR(gpuEventSynchronize(t.origin));
  t.originHost = before + (std::chrono::steady_clock::now() - before) / 2;
  return nullptr;
}

} // namespace

zeroc_rt_status_t gpuTimelineStart() {
  Timeline &t = timeline();
  if (t.on)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(gpuTimedEventCreate(&t.origin));
  ZEROC_RT_RETURN_IF_ERROR(anchor(t));
  t.on = true;
  return nullptr;
}

void gpuTimelineOp(int32_t op) {
  if (timeline().on)
    mark(0, op < 0 ? nullptr : opName(op), true);
}

void gpuTimelineCollective(const char *name, bool begin) {
  if (timeline().on)
    mark(1, name, begin);
}

zeroc_rt_status_t gpuTimelineTake(std::vector<train::DeviceSpan> &out) {
  Timeline &t = timeline();
  if (t.error) {
    zeroc_rt_status_t s = t.error;
    t.error = nullptr;
    return s;
  }
  if (!t.on || t.marks.empty())
    return nullptr;
  auto at = [&](void *event, std::chrono::steady_clock::time_point *when) -> zeroc_rt_status_t {
    // A collective started in the optimizer step may still run on the
    // communication stream, which the compute stream has not waited for.
    ZEROC_RT_RETURN_IF_ERROR(gpuEventSynchronize(event));
    float ms = 0;
    ZEROC_RT_RETURN_IF_ERROR(gpuEventElapsed(t.origin, event, &ms));
    *when = t.originHost + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double, std::milli>(ms));
    return nullptr;
  };
  // Compute: each op runs from its mark to the next compute mark. Comm: a
  // begin mark and the next end mark.
  std::vector<Mark> keep;
  const Mark *openOp = nullptr, *openComm = nullptr;
  std::chrono::steady_clock::time_point opStart, commStart;
  for (const Mark &m : t.marks) {
    std::chrono::steady_clock::time_point when;
    ZEROC_RT_RETURN_IF_ERROR(at(m.event, &when));
    if (m.stream == 0) {
      if (openOp && openOp->name)
        out.push_back({0, openOp->name, opStart, when});
      openOp = &m;
      opStart = when;
    } else if (m.begin) {
      openComm = &m;
      commStart = when;
    } else if (openComm) {
      out.push_back({1, m.name, commStart, when});
      openComm = nullptr;
    }
  }
  // The last op stays open: its end is the next mark.
  for (const Mark &m : t.marks)
    if (&m == openOp && m.name)
      keep.push_back(m);
    else
      t.pool.push_back(m.event);
  t.marks = std::move(keep);
  // A new origin on the idle GPU while no mark needs the old one: elapsed
  // times stay short, so a float's milliseconds stay microsecond-exact.
  if (t.marks.empty())
    return anchor(t);
  return nullptr;
}

} // namespace zeroc_rt::cuda
