//===- Timeline.cpp - The estimated step as an SVG picture ----------------===//
//
// SVG text written directly: a title and the estimate's figures, a legend,
// the lanes (events over an idle background, the step's end marked), the
// time axis in ms, then memory per lane. docs/Emit.md, "Pictures".
//
//===----------------------------------------------------------------------===//

#include "weft/Emit/Timeline.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>
#include <map>

using namespace weft;

namespace {

// Geometry, in px.
constexpr double kWidth = 1200, kLabelX = 12, kPlotX = 290, kPlotW = 870;
constexpr double kLaneH = 24, kLaneGap = 8, kLanesTop = 100;
constexpr double kMemBarW = 640, kMemRowH = 16, kMemGap = 8;
/// More devices than this: one lane per group of alike devices.
constexpr unsigned kLanePerDevice = 8;

struct Colour {
  const char *name, *fill;
};
/// Per EventKind, in its order.
constexpr Colour kKinds[] = {{"forward", "#4e79a7"},
                             {"backward", "#f28e2b"},
                             {"collective", "#e15759"},
                             {"gradient sync", "#76b7b2"},
                             {"optimizer update", "#59a14f"}};
constexpr Colour kIdle = {"idle", "#e4e4e4"};
constexpr Colour kMemory[] = {{"parameters", "#4e79a7"},
                              {"gradients", "#f28e2b"},
                              {"optimizer state", "#edc948"},
                              {"kept activations", "#b07aa1"},
                              {"largest transient", "#9c755f"}};

std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string num(double x) { return llvm::formatv("{0:F2}", x).str(); }

/// A tick spacing of 1, 2 or 5 × 10^k giving at most `maxTicks` ticks.
double tickStep(double span, int maxTicks) {
  double raw = span / maxTicks;
  double base = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * base >= raw)
      return m * base;
  return 10 * base;
}

/// One row of the picture: the events of priced device `index`, standing
/// for `count` devices, memory from mesh device `device`.
struct Lane {
  std::string label;
  unsigned index = 0, count = 1, device = 0;
};

double computeSeconds(llvm::ArrayRef<const StepEvent *> events) {
  double sum = 0;
  for (const StepEvent *e : events)
    if (e->kind == EventKind::Forward || e->kind == EventKind::Backward ||
        e->kind == EventKind::Update)
      sum += e->durationSeconds;
  return sum;
}

/// Up to kLanePerDevice devices: one lane each. Beyond: one lane per group
/// of priced devices of one class, ratio and events, plus the device with
/// the most compute.
std::vector<Lane>
lanesOf(const StepPicture &p,
        const std::vector<std::vector<const StepEvent *>> &events) {
  const std::vector<EventDevice> &devices = p.step.events.devices;
  std::vector<Lane> lanes;
  unsigned total = 0;
  for (const EventDevice &dev : devices)
    total += dev.orbit.size();
  if (total <= kLanePerDevice) {
    for (auto [i, dev] : llvm::enumerate(devices))
      for (unsigned d : dev.orbit)
        lanes.push_back(
            {llvm::formatv("device {0}: {1}", d, deviceLabel(p, i)).str(),
             unsigned(i), 1, d});
    llvm::sort(lanes, [](const Lane &a, const Lane &b) {
      return a.device < b.device;
    });
    return lanes;
  }
  double span = std::max(p.step.events.endSeconds, 1e-30);
  std::map<std::vector<int64_t>, size_t> groups;
  for (auto [i, dev] : llvm::enumerate(devices)) {
    std::vector<int64_t> key{int64_t(dev.meshClass),
                             std::llround(p.ratios[i] * 1e9)};
    for (const StepEvent *e : events[i]) {
      key.push_back(int64_t(e->kind));
      key.push_back(std::llround(e->startSeconds / span * 1e9));
      key.push_back(std::llround(e->durationSeconds / span * 1e9));
    }
    auto [it, fresh] = groups.try_emplace(key, lanes.size());
    if (fresh) {
      lanes.push_back({"", unsigned(i), 0, dev.orbit.front()});
    }
    Lane &lane = lanes[it->second];
    lane.count += dev.orbit.size();
    lane.device = std::min(lane.device, dev.orbit.front());
  }
  for (Lane &lane : lanes)
    lane.label = lane.count == 1 ? llvm::formatv("device {0}: {1}", lane.device,
                                                 deviceLabel(p, lane.index))
                                       .str()
                                 : llvm::formatv("{0} × {1}", lane.count,
                                                 deviceLabel(p, lane.index))
                                       .str();
  unsigned slowest = 0;
  for (unsigned i = 1; i < devices.size(); ++i)
    if (computeSeconds(events[i]) > computeSeconds(events[slowest]))
      slowest = i;
  lanes.push_back(
      {llvm::formatv("slowest: device {0}, {1}", devices[slowest].device,
                     deviceLabel(p, slowest))
           .str(),
       slowest, 1, devices[slowest].device});
  return lanes;
}

void legend(llvm::raw_ostream &os, double y, llvm::ArrayRef<Colour> colours) {
  double x = kLabelX;
  for (const Colour &c : colours) {
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"12\" "
                        "fill=\"{2}\"/>\n",
                        num(x), num(y), c.fill);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>\n", num(x + 16),
                        num(y + 10), escape(c.name));
    x += 28 + 7 * std::strlen(c.name);
  }
}

} // namespace

void weft::writeTimelineSVG(const StepPicture &p, llvm::raw_ostream &os) {
  const PlanEstimate &estimate = p.step.estimate;
  const StepEvents &se = p.step.events;
  std::vector<std::vector<const StepEvent *>> events(se.devices.size());
  std::map<unsigned, unsigned> indexOf;
  for (auto [i, dev] : llvm::enumerate(se.devices))
    indexOf[dev.device] = i;
  for (const StepEvent &e : se.events)
    events[indexOf[e.device]].push_back(&e);
  std::vector<Lane> lanes = lanesOf(p, events);

  double span = std::max(estimate.stepSeconds, se.endSeconds);
  if (span <= 0)
    span = 1e-3;
  auto x = [&](double seconds) { return kPlotX + seconds / span * kPlotW; };
  double laneStep = kLaneH + kLaneGap;
  double axisY = kLanesTop + lanes.size() * laneStep;
  double memTop = axisY + 96;
  double height = memTop + lanes.size() * (kMemRowH + kMemGap) + 16;

  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "version=\"1.1\" width=\"{0}\" height=\"{1}\" "
                      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, "
                      "Helvetica, Arial, sans-serif\" font-size=\"11\">\n",
                      num(kWidth), num(height));
  os << llvm::formatv("<title>Estimated training step: {0}</title>\n",
                      escape(p.title));
  os << llvm::formatv("<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
                      num(kWidth), num(height));
  os << llvm::formatv("<text x=\"{0}\" y=\"24\" font-size=\"16\" "
                      "font-weight=\"bold\">Estimated training step: {1}"
                      "</text>\n",
                      num(kLabelX), escape(p.title));
  std::string figures = llvm::formatv(
      "step {0:F2} ms, compute {1:F2} ms, communication share {2:F1} %, "
      "optimizer {3:F2} ms{4} (every figure an estimate)",
      estimate.stepSeconds * 1e3, estimate.computeSeconds * 1e3,
      estimate.commShare * 100, estimate.optimizerSeconds * 1e3,
      estimate.microBatches > 1
          ? llvm::formatv(", {0} micro-batches", estimate.microBatches).str()
          : "");
  os << llvm::formatv("<text x=\"{0}\" y=\"44\">{1}</text>\n", num(kLabelX),
                      escape(figures));
  std::vector<Colour> kinds(std::begin(kKinds), std::end(kKinds));
  kinds.push_back(kIdle);
  legend(os, 58, kinds);
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">lower third of a lane: "
                      "gradient sync overlapping the backward pass</text>\n",
                      num(kPlotX + 330), num(68));

  // Grid and time axis (ms).
  double stepMs = tickStep(span * 1e3, 10);
  int decimals = std::max(0, int(-std::floor(std::log10(stepMs))));
  for (double t = 0; t <= span * 1e3 * (1 + 1e-9); t += stepMs) {
    double tx = x(t / 1e3);
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
                        "stroke=\"#cccccc\" stroke-width=\"0.5\"/>\n",
                        num(tx), num(kLanesTop - 4), num(axisY + 4));
    os << llvm::formatv(
        "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">"
        "{2}</text>\n",
        num(tx), num(axisY + 18),
        llvm::formatv(("{0:F" + std::to_string(decimals) + "}").c_str(), t)
            .str());
  }
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">"
                      "time (ms)</text>\n",
                      num(kPlotX + kPlotW / 2), num(axisY + 36));

  // Lanes: idle background to the step's end, then the events.
  for (auto [i, lane] : llvm::enumerate(lanes)) {
    double y = kLanesTop + i * laneStep;
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>\n", num(kLabelX),
                        num(y + kLaneH / 2 + 4), escape(lane.label));
    os << llvm::formatv("<rect class=\"lane\" x=\"{0}\" y=\"{1}\" "
                        "width=\"{2}\" height=\"{3}\" fill=\"{4}\"/>\n",
                        num(kPlotX), num(y), num(x(span) - kPlotX), num(kLaneH),
                        kIdle.fill);
    // Crisp edges: no anti-aliased seams between adjacent events.
    os << "<g shape-rendering=\"crispEdges\">\n";
    for (const StepEvent *e : events[lane.index]) {
      double top = e->overlapped ? y + kLaneH * 2 / 3 : y;
      double h = e->overlapped ? kLaneH / 3 : kLaneH;
      os << llvm::formatv(
          "<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" "
          "fill=\"{4}\"><title>{5}: {6}, {7:F3} ms from {8:F3} ms"
          "</title></rect>\n",
          num(x(e->startSeconds)), num(top),
          llvm::formatv("{0:F3}", e->durationSeconds / span * kPlotW).str(),
          num(h), kKinds[int(e->kind)].fill, escape(e->label),
          kKinds[int(e->kind)].name, e->durationSeconds * 1e3,
          e->startSeconds * 1e3);
    }
    os << "</g>\n";
  }
  double endX = x(estimate.stepSeconds);
  os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
                      "stroke=\"#222222\" stroke-dasharray=\"4 3\"/>\n",
                      num(endX), num(kLanesTop - 8), num(axisY + 4));
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\">"
                      "estimated step {2:F2} ms</text>\n",
                      num(endX), num(kLanesTop - 10),
                      estimate.stepSeconds * 1e3);

  // Memory per lane against capacity.
  double capacity = 0;
  for (const Lane &lane : lanes)
    if (lane.device < estimate.memory.size())
      capacity = std::max(capacity, estimate.memory[lane.device].capacityBytes);
  double scale = capacity > 0 ? kMemBarW / capacity : 0;
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"13\" "
                      "font-weight=\"bold\">Memory per device at its peak "
                      "(GB; estimate; dashed: usable, {2:F0} % held back)"
                      "</text>\n",
                      num(kLabelX), num(memTop - 38),
                      p.reservedMemoryFraction * 100);
  legend(os, memTop - 28, kMemory);
  for (auto [i, lane] : llvm::enumerate(lanes)) {
    if (lane.device >= estimate.memory.size())
      continue;
    const DeviceMemoryEstimate &m = estimate.memory[lane.device];
    double y = memTop + i * (kMemRowH + kMemGap);
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>\n", num(kLabelX),
                        num(y + kMemRowH - 4), escape(lane.label));
    double at = kPlotX;
    double terms[] = {m.terms.parameters, m.terms.gradients,
                      m.terms.optimizerState, m.terms.activations,
                      m.transientBytes};
    for (auto [c, bytes] : llvm::zip(kMemory, terms)) {
      os << llvm::formatv("<rect class=\"memory\" x=\"{0}\" y=\"{1}\" "
                          "width=\"{2}\" height=\"{3}\" fill=\"{4}\"/>\n",
                          num(at), num(y), num(bytes * scale), num(kMemRowH),
                          c.fill);
      at += bytes * scale;
    }
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" "
                        "height=\"{3}\" fill=\"none\" stroke=\"#222222\"/>\n",
                        num(kPlotX), num(y), num(m.capacityBytes * scale),
                        num(kMemRowH));
    double usable =
        kPlotX + m.capacityBytes * (1 - p.reservedMemoryFraction) * scale;
    os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
                        "stroke=\"#222222\" stroke-dasharray=\"3 2\"/>\n",
                        num(usable), num(y - 2), num(y + kMemRowH + 2));
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2:F2} of {3:F2} GB{4}"
                        "</text>\n",
                        num(kPlotX + kMemBarW + 10), num(y + kMemRowH - 4),
                        m.peakBytes() / 1e9, m.capacityBytes / 1e9,
                        m.fits ? "" : ", does not fit");
  }
  os << "</svg>\n";
}
