//===- Trace.cpp - The estimated step as a Chrome trace -------------------===//
//
// Chrome's trace-event format, JSON object form, streamed with
// llvm::json::OStream one event per line: complete events ("X", µs) with
// pid = cluster node and tid = mesh device, metadata events ("M") naming
// processes and threads. One thread per group of alike devices
// (StepPicture::groups), on the node and device of its lowest device;
// overlapped gradient syncs sit on a thread of their own per group (tid =
// devices + device): Chrome's viewer nests the events of one thread and
// would misdraw two that overlap. docs/Emit.md, "Pictures".
//
//===----------------------------------------------------------------------===//

#include "weft/Emit/Trace.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>
#include <set>

using namespace weft;

namespace {

/// "0-7" or "0, 2, 5" (at most 8 listed).
std::string deviceList(llvm::ArrayRef<unsigned> devices) {
  bool contiguous = devices.size() > 2;
  for (size_t i = 1; i < devices.size() && contiguous; ++i)
    contiguous = devices[i] == devices[i - 1] + 1;
  if (contiguous)
    return llvm::formatv("{0}-{1}", devices.front(), devices.back()).str();
  std::string out;
  for (size_t i = 0; i < devices.size() && i < 8; ++i)
    out += (i ? ", " : "") + std::to_string(devices[i]);
  return devices.size() > 8 ? out + ", ..." : out;
}

/// Writes one event per line into the traceEvents array.
class EventWriter {
public:
  explicit EventWriter(llvm::raw_ostream &os) : os(os) {}

  void metadata(llvm::StringRef what, unsigned pid, unsigned tid,
                llvm::StringRef key, llvm::json::Value value) {
    line([&](llvm::json::OStream &j) {
      j.attribute("name", what);
      j.attribute("ph", "M");
      j.attribute("pid", pid);
      j.attribute("tid", tid);
      j.attributeObject("args", [&] { j.attribute(key, std::move(value)); });
    });
  }

  void complete(const StepEvent &e, unsigned pid, unsigned tid) {
    line([&](llvm::json::OStream &j) {
      j.attribute("name", e.label);
      j.attribute("cat", eventKindName(e.kind));
      j.attribute("ph", "X");
      // Microseconds to the nanosecond; the end is rounded as the next
      // start is, so events that touch do not overlap.
      double start = std::round(e.startSeconds * 1e9) / 1e3;
      double end = std::round(e.endSeconds() * 1e9) / 1e3;
      number(j, "ts", start);
      number(j, "dur", end - start);
      j.attribute("pid", pid);
      j.attribute("tid", tid);
      j.attributeObject("args", [&] {
        j.attribute("estimate", true);
        if (e.microBatch >= 0)
          j.attribute("micro_batch", e.microBatch);
      });
    });
  }

private:
  void line(llvm::function_ref<void(llvm::json::OStream &)> body) {
    os << (first ? "  " : ",\n  ");
    first = false;
    llvm::json::OStream j(os);
    j.object([&] { body(j); });
  }
  static void number(llvm::json::OStream &j, llvm::StringRef key, double v) {
    j.attributeBegin(key);
    j.rawValue(llvm::formatv("{0:F3}", v).str());
    j.attributeEnd();
  }

  llvm::raw_ostream &os;
  bool first = true;
};

} // namespace

void weft::writeTraceJSON(const StepPicture &p, llvm::raw_ostream &os) {
  const StepEvents &se = p.step.events;
  const PlanEstimate &estimate = p.step.estimate;
  unsigned numDevices = 0;
  for (const LaneGroup &g : p.groups)
    numDevices += g.devices.size();
  os << "{\"traceEvents\": [\n";
  EventWriter out(os);
  std::set<unsigned> nodes;
  for (const LaneGroup &g : p.groups) {
    const EventDevice &shown = se.devices[g.shown];
    // The group's lowest device: its node and its id name the thread.
    const EventDevice *lowest = &shown;
    for (const EventDevice &dev : se.devices)
      if (dev.orbit.front() == g.devices.front())
        lowest = &dev;
    unsigned pid = lowest->node, tid = g.devices.front();
    if (nodes.insert(pid).second) {
      std::string node =
          pid < p.nodeNames.size() ? p.nodeNames[pid] : std::to_string(pid);
      out.metadata(
          "process_name", pid, 0, "name",
          llvm::formatv("node {0}: {1} ({2})", pid, node, lowest->type).str());
      out.metadata("process_sort_index", pid, 0, "sort_index", pid);
    }
    std::string stands =
        g.devices.size() == 1
            ? ""
            : llvm::formatv(" (for {0} devices: {1})", g.devices.size(),
                            deviceList(g.devices))
                  .str();
    out.metadata("thread_name", pid, tid, "name",
                 llvm::formatv("device {0}: {1}{2}", tid,
                               deviceLabel(p, g.shown), stands)
                     .str());
    out.metadata("thread_sort_index", pid, tid, "sort_index", 2 * tid);
    llvm::ArrayRef<StepEvent> events = eventsOf(p, g.shown);
    unsigned channel = numDevices + tid;
    if (llvm::any_of(events, [](const StepEvent &e) { return e.overlapped; })) {
      out.metadata(
          "thread_name", pid, channel, "name",
          llvm::formatv("device {0}: gradient sync (overlapped)", tid).str());
      out.metadata("thread_sort_index", pid, channel, "sort_index",
                   2 * tid + 1);
    }
    for (const StepEvent &e : events)
      out.complete(e, pid, e.overlapped ? channel : tid);
  }
  llvm::json::Object other{{"format", "weft-estimated-trace"},
                           {"version", 1},
                           {"title", p.title},
                           {"cluster", p.cluster},
                           {"dtype", p.dtype},
                           {"estimate", true},
                           {"step_time_s", estimate.stepSeconds},
                           {"compute_s", estimate.computeSeconds},
                           {"optimizer_s", estimate.optimizerSeconds},
                           {"comm_share", estimate.commShare},
                           {"micro_batches", estimate.microBatches},
                           {"devices", numDevices},
                           {"peak_memory_bytes", estimate.peakMemoryBytes},
                           {"fits", estimate.fits}};
  os << "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": "
     << llvm::formatv("{0:2}", llvm::json::Value(std::move(other))) << "\n}\n";
}
