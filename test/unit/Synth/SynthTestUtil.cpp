//===- SynthTestUtil.cpp - Clusters, random graphs and spaces for tests ---===//

#include "SynthTestUtil.h"
#include "../Eval/EvalTestUtil.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::synth;

namespace weft::synth::test {

ClusterSpec cluster(unsigned nodes, unsigned devices, double memoryGB,
                    double slowIntraGBs) {
  std::string text = R"(
name: synth-test
device_types:
  - name: Fast
    fp32_peak: 10 TFLOPS
    memory: MEM GB
    memory_bandwidth: 1 TB/s
    efficiency: {matmul: 1, conv: 1, elementwise: 1, reduction: 1, gather: 1, data_movement: 1}
  - name: Slow
    fp32_peak: 5 TFLOPS
    memory: MEM GB
    memory_bandwidth: 0.5 TB/s
    efficiency: {matmul: 1, conv: 1, elementwise: 1, reduction: 1, gather: 1, data_movement: 1}
defaults:
  nic_bandwidth: 8 Gbit/s
  nic_latency: 10 us
  intra_bandwidth: 50 GB/s
  intra_latency: 5 us
nodes:
)";
  for (unsigned n = 0; n < nodes; ++n) {
    std::string links;
    if (n % 2 && slowIntraGBs > 0)
      links = llvm::formatv(", intra_bandwidth: {0} GB/s", slowIntraGBs);
    text += llvm::formatv("  - {{name: n{0}, type: {1}, devices: {2}{3}}\n", n,
                          n % 2 ? "Slow" : "Fast", devices, links)
                .str();
  }
  for (size_t i; (i = text.find("MEM")) != std::string::npos;)
    text.replace(i, 3, llvm::formatv("{0:f9}", memoryGB).str());
  auto spec = parseClusterSpec(text, "synth-test.yaml");
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return spec ? std::move(*spec) : ClusterSpec();
}

/// A random chain: matmuls by parameters, bias adds, relus and residual
/// adds over a [B, D] activation, ending in a reduce_sum.
std::string randomGraph(std::mt19937 &rng, unsigned ops) {
  const int64_t dims[] = {2, 4, 6, 8, 12};
  auto pick = [&](int n) { return int(rng() % n); };
  int64_t b = dims[1 + pick(4)], d = dims[pick(5)];
  std::string params, body;
  struct Val {
    std::string name;
    int64_t d;
  };
  std::vector<Val> vals{{"%x", d}};
  unsigned np = 0;
  for (unsigned i = 0; i < ops; ++i) {
    Val cur = vals.back();
    std::string out = "%v" + std::to_string(i);
    std::string t = llvm::formatv("tensor<{0}x{1}xf32>", b, cur.d).str();
    switch (pick(4)) {
    case 0: {
      int64_t e = dims[pick(5)];
      std::string w = "%p" + std::to_string(np++);
      params += llvm::formatv("    {0} = graph.parameter \"w{1}\" : "
                              "tensor<{2}x{3}xf32>\n",
                              w, np, cur.d, e);
      body += llvm::formatv("    {0} = graph.matmul {1}, {2} : ({3}, "
                            "tensor<{4}x{5}xf32>) -> tensor<{6}x{5}xf32>\n",
                            out, cur.name, w, t, cur.d, e, b);
      vals.push_back({out, e});
      break;
    }
    case 1: {
      std::string p = "%p" + std::to_string(np++);
      params += llvm::formatv(
          "    {0} = graph.parameter \"b{1}\" : tensor<{2}xf32>\n", p, np,
          cur.d);
      body += llvm::formatv("    {0} = graph.add {1}, {2} : ({3}, "
                            "tensor<{4}xf32>) -> {3}\n",
                            out, cur.name, p, t, cur.d);
      vals.push_back({out, cur.d});
      break;
    }
    case 2:
      body +=
          llvm::formatv("    {0} = graph.relu {1} : {2}\n", out, cur.name, t);
      vals.push_back({out, cur.d});
      break;
    default: {
      // Residual add with an earlier value of the same width, else itself.
      std::string other = cur.name;
      for (const Val &v : vals)
        if (v.d == cur.d && v.name != cur.name) {
          other = v.name;
          break;
        }
      body += llvm::formatv("    {0} = graph.add {1}, {2} : ({3}, {3}) -> "
                            "{3}\n",
                            out, cur.name, other, t);
      vals.push_back({out, cur.d});
      break;
    }
    }
  }
  Val last = vals.back();
  return llvm::formatv(
             "module {\n  func.func @main(%x: tensor<{0}x{1}xf32> "
             "{{graph.input = \"x\"}) -> tensor<f32> {\n{2}{3}    %l = "
             "graph.reduce_sum {4} {{axes = array<i64: 0, 1>, keepdims = "
             "false} : tensor<{0}x{5}xf32> -> tensor<f32>\n    return %l : "
             "tensor<f32>\n  }\n}\n",
             b, d, params, body, last.name, last.d)
      .str();
}

ParsedSpace parseSpace(mlir::MLIRContext &ctx, const std::string &text,
                       const ClusterSpec &spec, bool recompute) {
  ParsedSpace out;
  out.graph = weft::test::parsePlan(ctx, text);
  if (!out.graph) {
    out.error = "the program does not parse";
    return out;
  }
  auto space = SearchSpace::build(*out.graph, spec, {}, {}, recompute);
  if (!space)
    out.error = llvm::toString(space.takeError());
  else
    out.space = std::move(*space);
  return out;
}

} // namespace weft::synth::test
