//===- Svg.cpp - JCT CDF and utilisation plots as plain SVG --------------===//

#include "weft/Sched/Report.h"
#include "llvm/Support/Format.h"
#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::sched;

namespace {
const char *const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                               "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
constexpr double kWidth = 640, kHeight = 400, kLeft = 70, kRight = 160,
                 kTop = 30, kBottom = 50;

/// A plot with axes, ticks, labels and one polyline per series.
class Plot {
public:
  Plot(std::string title, std::string xLabel, std::string yLabel, bool logX)
      : title(std::move(title)), xLabel(std::move(xLabel)),
        yLabel(std::move(yLabel)), logX(logX) {}

  void add(std::string name, std::vector<std::pair<double, double>> points) {
    series.push_back({std::move(name), std::move(points)});
  }

  std::string render(double yMax) const {
    double xMin = INFINITY, xMax = -INFINITY;
    for (const auto &s : series)
      for (const auto &p : s.second) {
        double x = tx(p.first);
        xMin = std::min(xMin, x);
        xMax = std::max(xMax, x);
      }
    if (!(xMin < xMax)) {
      xMin = std::isfinite(xMin) ? xMin - 1 : 0;
      xMax = xMin + 2;
    }
    double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
    auto px = [&](double x) {
      return kLeft + (tx(x) - xMin) / (xMax - xMin) * plotW;
    };
    auto py = [&](double y) { return kTop + plotH - y / yMax * plotH; };
    std::string out;
    llvm::raw_string_ostream os(out);
    os << llvm::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" "
        "width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
        "font-size=\"12\">\n",
        kWidth, kHeight);
    os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    os << llvm::format("<text x=\"%.0f\" y=\"18\" font-size=\"14\">", kLeft)
       << title << "</text>\n";
    os << llvm::format("<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
                       "height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n",
                       kLeft, kTop, plotW, plotH);
    for (int i = 0; i <= 4; ++i) {
      double y = yMax * i / 4;
      os << llvm::format("<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">"
                         "%.2f</text>\n",
                         kLeft - 5, py(y) + 4, y);
      double xv = xMin + (xMax - xMin) * i / 4;
      double label = logX ? std::pow(10, xv) : xv;
      os << llvm::format("<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">"
                         "%.3g</text>\n",
                         kLeft + plotW * i / 4, kTop + plotH + 16, label);
    }
    os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
                       kLeft + plotW / 2, kHeight - 12)
       << xLabel << "</text>\n";
    os << llvm::format("<text x=\"14\" y=\"%.0f\" transform=\"rotate(-90 14 "
                       "%.0f)\" text-anchor=\"middle\">",
                       kTop + plotH / 2, kTop + plotH / 2)
       << yLabel << "</text>\n";
    for (unsigned i = 0; i < series.size(); ++i) {
      const char *color = kColors[i % std::size(kColors)];
      os << "<polyline fill=\"none\" stroke=\"" << color
         << "\" stroke-width=\"1.5\" points=\"";
      for (const auto &p : series[i].second)
        os << llvm::format("%.1f,%.1f ", px(p.first),
                           py(std::min(p.second, yMax)));
      os << "\"/>\n";
      os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">",
                         kWidth - kRight + 10, kTop + 14 + 16.0 * i, color)
         << series[i].first << "</text>\n";
    }
    os << "</svg>\n";
    return out;
  }

private:
  double tx(double x) const { return logX ? std::log10(std::max(x, 1e-3)) : x; }

  std::string title, xLabel, yLabel;
  bool logX;
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>
      series;
};
} // namespace

std::string sched::jctCdfSvg(llvm::ArrayRef<SimResult> results,
                             const Workload &workload) {
  Plot plot("JCT CDF (measured jobs)", "job completion time (h, log scale)",
            "fraction of jobs", /*logX=*/true);
  for (const SimResult &result : results) {
    std::vector<double> jcts;
    for (const JobRecord &r : result.jobs)
      if (r.status == JobStatus::Finished && workload.measured(r.id))
        jcts.push_back((r.finishS - workload.jobs[r.id].arrivalS) / 3600);
    std::sort(jcts.begin(), jcts.end());
    std::vector<std::pair<double, double>> points;
    size_t step = std::max<size_t>(1, jcts.size() / 400);
    for (size_t i = 0; i < jcts.size(); i += step)
      points.push_back({jcts[i], double(i + 1) / jcts.size()});
    if (!jcts.empty())
      points.push_back({jcts.back(), 1.0});
    plot.add(result.policy, std::move(points));
  }
  return plot.render(1.0);
}

std::string sched::utilizationSvg(llvm::ArrayRef<SimResult> results) {
  Plot plot("GPU utilisation per round", "time (h)", "useful GPU fraction",
            /*logX=*/false);
  for (const SimResult &result : results) {
    // Average into at most ~500 buckets.
    const auto &u = result.utilization;
    size_t step = std::max<size_t>(1, u.size() / 500);
    std::vector<std::pair<double, double>> points;
    for (size_t i = 0; i < u.size(); i += step) {
      double sum = 0;
      size_t end = std::min(u.size(), i + step);
      for (size_t k = i; k < end; ++k)
        sum += u[k].second;
      points.push_back({u[i].first / 3600, sum / (end - i)});
    }
    plot.add(result.policy, std::move(points));
  }
  return plot.render(1.0);
}
