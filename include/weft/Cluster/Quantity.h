//===- Quantity.h - Numbers with explicit units ("300 GB/s", "5 us") -*- C++
//-*-//
//
// Cluster specs state every figure with its unit. These parsers turn such a
// string into SI base units (bytes/s, seconds, bytes, FLOP/s) and say what was
// expected when the unit is missing or of the wrong kind.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CLUSTER_QUANTITY_H
#define WEFT_CLUSTER_QUANTITY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace weft {

/// The kinds of quantity a spec contains.
enum class QuantityKind {
  /// GB/s, MB/s, TB/s, GiB/s, Gbit/s, Mbit/s, Tbit/s, Gbps, Mbps → bytes/s.
  Bandwidth,
  /// ns, us, µs, ms, s → seconds.
  Latency,
  /// MB, GB, TB, MiB, GiB, TiB → bytes.
  Memory,
  /// GFLOPS, TFLOPS, PFLOPS (or .../s spelt FLOP/s) → FLOP/s.
  Flops,
};

/// "bandwidth", "latency", ... for messages.
llvm::StringRef toString(QuantityKind kind);

/// Parses `text` as a strictly positive quantity of `kind`, returned in SI
/// base units. Errors are lower-case messages without location, e.g.
/// "expected a bandwidth such as '300 GB/s' or '10.4 Gbit/s', found '5 us'".
llvm::Expected<double> parseQuantity(llvm::StringRef text, QuantityKind kind);

/// Same as parseQuantity but returns the message (empty on success); for
/// YAML I/O scalar traits, which report errors as strings.
std::string parseQuantityInto(llvm::StringRef text, QuantityKind kind,
                              double &value);

} // namespace weft

#endif // WEFT_CLUSTER_QUANTITY_H
