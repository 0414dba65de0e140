//===- SynthTestUtil.cpp - Clusters, graphs, spaces and enumeration -------===//

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
                       const ClusterSpec &spec, bool recompute,
                       std::optional<double> bucketBytes) {
  ParsedSpace out;
  out.graph = weft::test::parsePlan(ctx, text);
  if (!out.graph) {
    out.error = "the program does not parse";
    return out;
  }
  EvalOptions eval;
  if (bucketBytes)
    eval.gradientBucketBytes = *bucketBytes;
  auto space = SearchSpace::build(*out.graph, spec, eval, {}, recompute);
  if (!space)
    out.error = llvm::toString(space.takeError());
  else
    out.space = std::move(*space);
  return out;
}

std::string residualModule(const std::string &params, const std::string &body,
                           const std::string &last) {
  return "module {\n  func.func @main(%x: tensor<8x16xf32> {graph.input = "
         "\"x\"}) -> tensor<f32> {\n" +
         params + body + "    %l = graph.reduce_sum " + last +
         " {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x16xf32> -> "
         "tensor<f32>\n    return %l : tensor<f32>\n  }\n}\n";
}

std::string repeatedBlocks(unsigned blocks) {
  std::string params, body;
  std::string cur = "%x";
  for (unsigned i = 0; i < blocks; ++i) {
    params += llvm::formatv(
        "    %w{0} = graph.parameter \"w{0}\" : tensor<16x32xf32>\n"
        "    %u{0} = graph.parameter \"u{0}\" : tensor<32x16xf32>\n"
        "    %c{0} = graph.parameter \"c{0}\" : tensor<16xf32>\n",
        i);
    body += llvm::formatv(
        "    %m{0} = graph.matmul {1}, %w{0} : (tensor<8x16xf32>, "
        "tensor<16x32xf32>) -> tensor<8x32xf32>\n"
        "    %r{0} = graph.relu %m{0} : tensor<8x32xf32>\n"
        "    %n{0} = graph.matmul %r{0}, %u{0} : (tensor<8x32xf32>, "
        "tensor<32x16xf32>) -> tensor<8x16xf32>\n"
        "    %a{0} = graph.add %n{0}, %c{0} : (tensor<8x16xf32>, "
        "tensor<16xf32>) -> tensor<8x16xf32>\n"
        "    %h{0} = graph.add {1}, %a{0} : (tensor<8x16xf32>, "
        "tensor<8x16xf32>) -> tensor<8x16xf32>\n",
        i, cur);
    cur = "%h" + std::to_string(i);
  }
  return residualModule(params, body, cur);
}

void BruteForce::run(unsigned p, const StateKey &key, double g,
                     const MemoryTally &memory) {
  if (p == std::min(end, space.numPositions())) {
    for (unsigned r = 0; r < space.numReps(); ++r)
      if (memory.peak(r) > space.capacity()[r])
        return;
    ++plans;
    best = std::min(best, g);
    return;
  }
  std::vector<StepChoice> choices;
  space.forEachChoice(p, [&](const StepChoice &c) { choices.push_back(c); });
  for (const StepChoice &c : choices) {
    auto r = space.step(p, key, c);
    if (!r)
      continue;
    run(p + 1, r->next, g + r->cost, memory.after(*r));
  }
}

double BruteForce::solve() {
  run(0, {}, 0, MemoryTally(space.numReps()));
  return best;
}

} // namespace weft::synth::test
