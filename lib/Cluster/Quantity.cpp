//===- Quantity.cpp - Numbers with explicit units
//--------------------------===//

#include "weft/Cluster/Quantity.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>

using namespace weft;

namespace {
struct UnitScale {
  const char *unit;
  double scale;
};
} // namespace

// Units are case-sensitive on purpose: "GB/s" (bytes) and "Gb/s" (bits)
// differ by 8x, so "Gb/s" is accepted only as bits.
static const UnitScale kBandwidthUnits[] = {
    {"TB/s", 1e12},          {"GB/s", 1e9},
    {"MB/s", 1e6},           {"TiB/s", 1099511627776.0},
    {"GiB/s", 1073741824.0}, {"MiB/s", 1048576.0},
    {"Tbit/s", 1e12 / 8},    {"Gbit/s", 1e9 / 8},
    {"Mbit/s", 1e6 / 8},     {"Tb/s", 1e12 / 8},
    {"Gb/s", 1e9 / 8},       {"Mb/s", 1e6 / 8},
    {"Tbps", 1e12 / 8},      {"Gbps", 1e9 / 8},
    {"Mbps", 1e6 / 8}};
static const UnitScale kLatencyUnits[] = {
    {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ns", 1e-9}};
static const UnitScale kMemoryUnits[] = {
    {"TB", 1e12},          {"GB", 1e9},
    {"MB", 1e6},           {"TiB", 1099511627776.0},
    {"GiB", 1073741824.0}, {"MiB", 1048576.0}};
static const UnitScale kFlopsUnits[] = {{"PFLOPS", 1e15},  {"TFLOPS", 1e12},
                                        {"GFLOPS", 1e9},   {"PFLOP/s", 1e15},
                                        {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9}};

llvm::StringRef weft::toString(QuantityKind kind) {
  switch (kind) {
  case QuantityKind::Bandwidth:
    return "bandwidth";
  case QuantityKind::Latency:
    return "latency";
  case QuantityKind::Memory:
    return "memory size";
  case QuantityKind::Flops:
    return "compute rate";
  }
  return "quantity";
}

static llvm::ArrayRef<UnitScale> unitsOf(QuantityKind kind) {
  switch (kind) {
  case QuantityKind::Bandwidth:
    return kBandwidthUnits;
  case QuantityKind::Latency:
    return kLatencyUnits;
  case QuantityKind::Memory:
    return kMemoryUnits;
  case QuantityKind::Flops:
    return kFlopsUnits;
  }
  return {};
}

static llvm::StringRef examplesOf(QuantityKind kind) {
  switch (kind) {
  case QuantityKind::Bandwidth:
    return "'300 GB/s' or '10.4 Gbit/s'";
  case QuantityKind::Latency:
    return "'5 us' or '1.5 ms'";
  case QuantityKind::Memory:
    return "'16 GB' or '80 GiB'";
  case QuantityKind::Flops:
    return "'15.7 TFLOPS'";
  }
  return "";
}

std::string weft::parseQuantityInto(llvm::StringRef text, QuantityKind kind,
                                    double &value) {
  llvm::StringRef trimmed = text.trim();
  auto fail = [&](llvm::StringRef what) {
    return (llvm::Twine(what) + " " + toString(kind) + " such as " +
            examplesOf(kind) + ", found '" + trimmed + "'")
        .str();
  };
  // The number is the longest prefix made of number characters.
  size_t end = trimmed.find_first_not_of("0123456789.eE+-");
  llvm::StringRef number = trimmed.substr(0, end);
  llvm::StringRef unit =
      end == llvm::StringRef::npos ? "" : trimmed.substr(end).trim();
  double magnitude = 0;
  if (number.empty() || number.getAsDouble(magnitude) ||
      !std::isfinite(magnitude))
    return fail("expected a");
  if (unit.empty())
    return fail("missing unit: expected a");
  const UnitScale *scale = nullptr;
  for (const UnitScale &u : unitsOf(kind))
    if (unit == u.unit)
      scale = &u;
  if (!scale)
    return fail("wrong unit '" + unit.str() + "': expected a");
  if (magnitude <= 0)
    return fail("expected a positive");
  value = magnitude * scale->scale;
  return "";
}

llvm::Expected<double> weft::parseQuantity(llvm::StringRef text,
                                           QuantityKind kind) {
  double value = 0;
  std::string err = parseQuantityInto(text, kind, value);
  if (!err.empty())
    return badInput("{0}", err);
  return value;
}
