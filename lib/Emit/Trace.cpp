//===- Trace.cpp - The estimated step as a Chrome trace -------------------===//
//
// Chrome's trace-event format, JSON object form: complete events ("X",
// µs) with pid = cluster node and tid = mesh device, metadata events ("M")
// naming processes and threads. Overlapped gradient syncs sit on a thread
// of their own per device (tid = devices + device): Chrome's viewer nests
// the events of one thread and would misdraw two that overlap. One thread
// per priced device; its name says how many devices it stands for.
// docs/Emit.md, "Pictures".
//
//===----------------------------------------------------------------------===//

#include "weft/Emit/Trace.h"
#include "llvm/Support/FormatVariadic.h"
#include <map>
#include <set>

using namespace weft;
using llvm::json::Array;
using llvm::json::Object;

namespace {

Object metadata(llvm::StringRef what, unsigned pid, unsigned tid, Object args) {
  return Object{{"name", what},
                {"ph", "M"},
                {"pid", pid},
                {"tid", tid},
                {"args", std::move(args)}};
}

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

} // namespace

llvm::json::Value weft::traceJSON(const StepPicture &p) {
  const StepEvents &se = p.step.events;
  const PlanEstimate &estimate = p.step.estimate;
  unsigned numDevices = 0;
  for (const EventDevice &dev : se.devices)
    numDevices += dev.orbit.size();
  Array events;
  std::map<unsigned, const EventDevice *> byDevice;
  std::set<unsigned> nodes, withChannel;
  for (const StepEvent &e : se.events)
    if (e.overlapped)
      withChannel.insert(e.device);
  for (auto [i, dev] : llvm::enumerate(se.devices)) {
    byDevice[dev.device] = &dev;
    if (nodes.insert(dev.node).second) {
      std::string name = dev.node < p.nodeNames.size()
                             ? p.nodeNames[dev.node]
                             : std::to_string(dev.node);
      events.push_back(
          metadata("process_name", dev.node, 0,
                   Object{{"name", llvm::formatv("node {0}: {1} ({2})",
                                                 dev.node, name, dev.type)
                                       .str()}}));
      events.push_back(metadata("process_sort_index", dev.node, 0,
                                Object{{"sort_index", dev.node}}));
    }
    std::string stands =
        dev.orbit.size() == 1
            ? ""
            : llvm::formatv(" (for {0} devices: {1})", dev.orbit.size(),
                            deviceList(dev.orbit))
                  .str();
    std::string name = llvm::formatv("device {0}: {1}{2}", dev.device,
                                     deviceLabel(p, i), stands);
    events.push_back(
        metadata("thread_name", dev.node, dev.device, Object{{"name", name}}));
    events.push_back(metadata("thread_sort_index", dev.node, dev.device,
                              Object{{"sort_index", 2 * dev.device}}));
    if (!withChannel.count(dev.device))
      continue;
    unsigned channel = numDevices + dev.device;
    events.push_back(metadata(
        "thread_name", dev.node, channel,
        Object{{"name", llvm::formatv("device {0}: gradient sync (overlapped)",
                                      dev.device)
                            .str()}}));
    events.push_back(metadata("thread_sort_index", dev.node, channel,
                              Object{{"sort_index", 2 * dev.device + 1}}));
  }
  for (const StepEvent &e : se.events) {
    const EventDevice &dev = *byDevice[e.device];
    Object args{{"estimate", true}, {"devices", dev.orbit.size()}};
    if (e.microBatch >= 0)
      args["micro_batch"] = e.microBatch;
    events.push_back(
        Object{{"name", e.label},
               {"cat", eventKindName(e.kind)},
               {"ph", "X"},
               {"ts", e.startSeconds * 1e6},
               {"dur", e.durationSeconds * 1e6},
               {"pid", dev.node},
               {"tid", e.overlapped ? numDevices + e.device : e.device},
               {"args", std::move(args)}});
  }
  Object other{{"format", "weft-estimated-trace"},
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
  return Object{{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData", std::move(other)}};
}

void weft::writeTraceJSON(const StepPicture &picture, llvm::raw_ostream &os) {
  llvm::json::Value trace = traceJSON(picture);
  Object &root = *trace.getAsObject();
  os << "{\"traceEvents\": [\n";
  const Array &events = *root.getArray("traceEvents");
  for (size_t i = 0; i < events.size(); ++i)
    os << "  " << events[i] << (i + 1 < events.size() ? ",\n" : "\n");
  os << "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": "
     << llvm::formatv("{0:2}", *root.get("otherData")) << "\n}\n";
}
