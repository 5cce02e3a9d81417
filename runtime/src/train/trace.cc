//===- trace.cc - --trace: Chrome / Perfetto trace events per rank -*- C++ -*-===//
//
// DIR/rank<r>.trace.json is Chrome's trace event format (chrome://tracing,
// ui.perfetto.dev): complete events ("ph": "X") with microsecond timestamps
// from the rank's own start, pid = rank, tid 0 = compute (the micro-step's
// ops, the engine's phases), tid 1 = communication (every collective, with
// the bytes this rank sends), as the host ran or queued them; on a GPU,
// tid 2 and 3 = the same as its compute and communication streams ran
// them (Device::takeTimeline).
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace zeroc_rt::train {
namespace {

double microseconds(Tracer::Clock::time_point from, Tracer::Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

} // namespace

zeroc_rt_status_t Tracer::open(const std::string &dir, int r) {
  if (zeroc_rt_status_t status = makeDirectories(dir))
    return ZEROC_RT_TRAIN_WRAP(status, "--trace: ",
                               "; pass a --trace DIR that can be created");
  rank = r;
  path = dir + "/rank" + std::to_string(rank) + ".trace.json";
  std::FILE *f = openForWriting(path);
  if (!f)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "--trace: cannot create '%s': %s",
                          path.c_str(), std::strerror(errno));
  std::fclose(f);
  ::unlink(path.c_str());
  events.reserve(4096);
  origin = Clock::now();
  on = true;
  return nullptr;
}

void Tracer::span(Track track, const char *name, const char *category,
                  Clock::time_point begin, Clock::time_point end, int64_t bytes) {
  if (!on)
    return;
  if (events.size() >= kMaxEvents) {
    ++dropped;
    return;
  }
  events.push_back({name, category, track, begin, end, bytes});
}

void Tracer::beginOp(const char *name) {
  if (!on)
    return;
  Clock::time_point now = Clock::now();
  if (opName)
    span(kCompute, opName, "op", opBegin, now);
  opName = name;
  opBegin = now;
}

void Tracer::endOp() {
  if (!on || !opName)
    return;
  span(kCompute, opName, "op", opBegin, Clock::now());
  opName = nullptr;
}

zeroc_rt_status_t Tracer::write() const {
  if (!on)
    return nullptr;
  std::string text = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"rank\": " +
                     std::to_string(rank) + ", \"dropped_events\": " +
                     std::to_string(dropped) + "}, \"traceEvents\": [\n";
  const char *threads[] = {"compute", "communication", "device compute",
                           "device communication"};
  for (int t = 0; t < 4; ++t)
    text += format("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
                   "\"tid\": %d, \"args\": {\"name\": \"%s\"}},\n",
                   rank, t, threads[t]);
  text += format("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                 "\"tid\": 0, \"args\": {\"name\": \"rank %d\"}}",
                 rank, rank);
  for (const Event &e : events) {
    text += format(",\n{\"name\": %s, \"cat\": \"%s\", \"ph\": \"X\", "
                   "\"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f",
                   jsonString(e.name ? e.name : "").c_str(), e.category, rank,
                   static_cast<int>(e.track), microseconds(origin, e.begin),
                   microseconds(e.begin, e.end));
    if (e.bytes >= 0)
      text += format(", \"args\": {\"bytes\": %lld}", static_cast<long long>(e.bytes));
    text += "}";
  }
  text += "\n]}\n";
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
  std::FILE *f = openForWriting(tmp);
  if (!f)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "--trace: cannot create '%s': %s",
                          tmp.c_str(), std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    ::unlink(tmp.c_str());
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "--trace: writing '%s' failed",
                          tmp.c_str());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "--trace: cannot rename '%s' to '%s': %s",
                          tmp.c_str(), path.c_str(), std::strerror(errno));
  }
  return nullptr;
}

} // namespace zeroc_rt::train
