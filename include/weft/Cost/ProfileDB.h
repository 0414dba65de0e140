//===- ProfileDB.h - Measured op and collective times -------------*- C++
//-*-===//
//
// A profile DB holds times measured by tools/weft-profile on real hardware:
// kernels (by op class and dtype, at several sizes) and collectives (by kind,
// group size and bytes). The cost model prefers these figures to the
// roofline, interpolating by size, and marks them as measured. Format:
// docs/CostModel.md ("Profile DB").
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COST_PROFILEDB_H
#define WEFT_COST_PROFILEDB_H

#include "weft/Cost/OpCost.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace weft {

/// One measured kernel.
struct KernelSample {
  /// Device type name as in the cluster spec ("CPU", "V100").
  std::string device;
  /// The profiled kernel ("linear", "gelu"...), informational.
  std::string kernel;
  OpClass opClass = OpClass::Elementwise;
  DType dtype = DType::FP32;
  double flops = 0;
  double bytes = 0;
  double seconds = 0;
};

/// One measured collective.
struct CollectiveSample {
  std::string device;
  /// "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
  /// "broadcast", "send_recv".
  std::string collective;
  unsigned devices = 0;
  /// Bytes per device (the all-reduce buffer, one shard of an all-gather).
  double bytes = 0;
  double seconds = 0;
};

/// Measured times, queried by the cost model.
class ProfileDB {
public:
  std::vector<KernelSample> kernels;
  std::vector<CollectiveSample> collectives;
  /// Free-form provenance ("torch 1.13.1, gloo, 2 processes").
  std::string description;

  /// The measured time of `work` on `device` in `dtype`, interpolated
  /// log-log between the two nearest sizes of the same (device, op class,
  /// dtype); the size is FLOPs for matmul and conv, bytes otherwise. Below
  /// the smallest sample the smallest time is used (launch overhead); above
  /// the largest, time grows in proportion to size. None without samples.
  std::optional<double> kernelSeconds(llvm::StringRef device, DType dtype,
                                      const OpWork &work) const;

  /// The measured time of `collective` over `devices` members with `bytes`
  /// per device, interpolated the same way by bytes; samples must have the
  /// same group size.
  std::optional<double> collectiveSeconds(llvm::StringRef device,
                                          llvm::StringRef collective,
                                          unsigned devices, double bytes) const;
};

/// Op time preferring the DB: measured (and marked so) when it has samples,
/// else the roofline.
OpTime opTime(const DeviceType &type, DType dtype, const OpWork &work,
              const ProfileDB *db);

/// Reads a DB written by weft-profile (or writeProfileDB). Errors are bad
/// input naming the file and the offending entry.
llvm::Expected<ProfileDB> loadProfileDB(llvm::StringRef path);
llvm::Expected<ProfileDB> parseProfileDB(llvm::StringRef text,
                                         llvm::StringRef fileName);
/// Writes `db` as JSON.
void writeProfileDB(const ProfileDB &db, llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_COST_PROFILEDB_H
