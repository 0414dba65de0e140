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

double computeSeconds(llvm::ArrayRef<StepEvent> events) {
  double sum = 0;
  for (const StepEvent &e : events)
    if (e.kind == EventKind::Forward || e.kind == EventKind::Backward ||
        e.kind == EventKind::Update)
      sum += e.durationSeconds;
  return sum;
}

/// Up to kLanePerDevice devices: one lane each. Beyond: one lane per group
/// of alike devices (StepPicture::groups), plus the device with the most
/// compute.
std::vector<Lane> lanesOf(const StepPicture &p) {
  const std::vector<EventDevice> &devices = p.step.events.devices;
  std::vector<Lane> lanes;
  unsigned total = 0;
  for (const LaneGroup &g : p.groups)
    total += g.devices.size();
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
  for (const LaneGroup &g : p.groups) {
    unsigned count = g.devices.size();
    std::string label = deviceLabel(p, g.shown);
    if (count == 1)
      label = llvm::formatv("device {0}: {1}", g.devices[0], label).str();
    else
      label = llvm::formatv("{0} × {1}", count, label).str();
    lanes.push_back({label, g.shown, count, g.devices[0]});
  }
  unsigned slowest = 0;
  for (unsigned i = 1; i < devices.size(); ++i)
    if (computeSeconds(eventsOf(p, i)) > computeSeconds(eventsOf(p, slowest)))
      slowest = i;
  lanes.push_back(
      {llvm::formatv("slowest: device {0}, {1}", devices[slowest].device,
                     deviceLabel(p, slowest))
           .str(),
       slowest, 1, devices[slowest].device});
  return lanes;
}

/// Events that follow each other with no visible gap, drawn as one
/// rectangle: events of one kind when one of them is narrower than a pixel,
/// events of several kinds while they fill at most a pixel (coloured by the
/// kind that takes the most of it). A lane of a large plan draws at most a
/// few rectangles per pixel, not one per op.
struct Run {
  const StepEvent *first = nullptr, *last = nullptr;
  unsigned count = 0;
  /// Seconds per EventKind.
  double seconds[std::size(kKinds)] = {};

  double total() const {
    double sum = 0;
    for (double s : seconds)
      sum += s;
    return sum;
  }
  /// The kind taking the most time, and whether it is the only one.
  std::pair<unsigned, bool> kind() const {
    unsigned best = 0, kinds = 0;
    for (unsigned k = 0; k < std::size(kKinds); ++k) {
      kinds += seconds[k] > 0;
      if (seconds[k] > seconds[best])
        best = k;
    }
    return {best, kinds <= 1};
  }
  void add(const StepEvent &e) {
    if (!first)
      first = &e;
    last = &e;
    ++count;
    seconds[int(e.kind)] += e.durationSeconds;
  }
};

void drawRun(llvm::raw_ostream &os, const Run &run, double laneY, double span) {
  const StepEvent &e = *run.first;
  double x0 = kPlotX + e.startSeconds / span * kPlotW;
  double x1 = kPlotX + run.last->endSeconds() / span * kPlotW;
  double top = e.overlapped ? laneY + kLaneH * 2 / 3 : laneY;
  double h = e.overlapped ? kLaneH / 3 : kLaneH;
  auto [kind, alone] = run.kind();
  const Colour &c = kKinds[kind];
  std::string what;
  if (run.count == 1) {
    what = llvm::formatv("{0}: {1}", e.label, c.name).str();
  } else {
    std::string kinds;
    if (!alone)
      for (unsigned k = 0; k < std::size(kKinds); ++k)
        if (run.seconds[k] > 0)
          kinds += llvm::formatv("{0}{1} {2:F3} ms", kinds.empty() ? "" : ", ",
                                 kKinds[k].name, run.seconds[k] * 1e3);
    what = llvm::formatv("{0} {1} events{2}, {3} … {4}", run.count,
                         alone ? c.name : "", alone ? "" : " (" + kinds + ")",
                         e.label, run.last->label)
               .str();
  }
  os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2:F3}\" "
                      "height=\"{3}\" fill=\"{4}\"><title>{5}, {6:F3} ms "
                      "from {7:F3} ms</title></rect>\n",
                      num(x0), num(top), x1 - x0, num(h), c.fill, escape(what),
                      run.total() * 1e3, e.startSeconds * 1e3);
}

/// Draws the events of one lane, merging runs (Run).
void drawEvents(llvm::raw_ostream &os, llvm::ArrayRef<StepEvent> events,
                double laneY, double span) {
  double pixel = span / kPlotW;
  for (bool overlapped : {false, true}) {
    Run run;
    for (const StepEvent &e : events) {
      if (e.overlapped != overlapped)
        continue;
      if (run.first && e.startSeconds - run.last->endSeconds() < pixel / 2) {
        auto [kind, alone] = run.kind();
        bool narrow = e.durationSeconds < pixel ||
                      run.last->endSeconds() - run.first->startSeconds < pixel;
        bool sameKind = alone && kind == unsigned(e.kind);
        if ((sameKind && narrow) ||
            (e.durationSeconds < pixel &&
             e.endSeconds() - run.first->startSeconds <= pixel)) {
          run.add(e);
          continue;
        }
      }
      if (run.first)
        drawRun(os, run, laneY, span);
      run = Run();
      run.add(e);
    }
    if (run.first)
      drawRun(os, run, laneY, span);
  }
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
  std::vector<Lane> lanes = lanesOf(p);

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
    drawEvents(os, eventsOf(p, lane.index), y, span);
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
