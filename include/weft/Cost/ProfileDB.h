//===- ProfileDB.h - Measured op and collective times -------------*- C++
//-*-===//
//
// A profile DB holds times measured by tools/weft-profile on real hardware:
// ops (by op name and shard shapes, forward and backward, as the emitted
// program runs them), kernels (by op class and dtype, at several sizes),
// collectives (by kind, group size and bytes) and each device's fixed cost
// of one op call. The cost model prefers these figures to the roofline,
// interpolating kernels by size, and marks them as measured. Format:
// docs/CostModel.md ("Profile DB").
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COST_PROFILEDB_H
#define WEFT_COST_PROFILEDB_H

#include "weft/Cost/OpCost.h"
#include "llvm/ADT/StringMap.h"
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

/// One op measured at one set of shard shapes (version 2).
struct OpSample {
  std::string device;
  DType dtype = DType::FP32;
  /// weft::opKey: "matmul [64,256][256,1024]->[64,1024]".
  std::string key;
  /// One call forward, and its backward, each with its fixed cost.
  double forwardSeconds = 0, backwardSeconds = 0;
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
  /// Per device type: the fixed cost of one op call in the program that runs
  /// the plan (Python, dispatch, autograd), added to every kernel or
  /// roofline time that is not an op sample (which includes it). Version 2.
  llvm::StringMap<double> opOverheadSeconds;
  /// Whether the measured runtime overlaps the gradient sync with the
  /// backward pass (unknown when unset). weft-profile --ranks measures the
  /// emitted runtime, which syncs after the backward: false.
  std::optional<bool> gradientSyncOverlap;
  /// Free-form provenance ("torch 1.13.1, gloo, 2 processes").
  std::string description;

  /// The measured time of `work` on `device` in `dtype`, interpolated
  /// log-log between the two nearest sizes of the same (device, op class,
  /// dtype); the size is FLOPs for matmul and conv, bytes otherwise. Below
  /// the smallest sample the smallest time is used (launch overhead); above
  /// the largest, time grows in proportion to size. None without samples.
  std::optional<double> kernelSeconds(llvm::StringRef device, DType dtype,
                                      const OpWork &work) const;

  /// Adds an op sample (a later sample of the same key replaces it).
  void addOp(OpSample sample);
  const std::vector<OpSample> &ops() const { return opSamples; }
  /// The measured time of the op `work.key` names, in `work`'s direction;
  /// None when the DB has no sample of that key on `device` in `dtype`.
  std::optional<double> opSeconds(llvm::StringRef device, DType dtype,
                                  const OpWork &work) const;
  /// The fixed cost of one op call on `device` (0 when not measured).
  double opOverhead(llvm::StringRef device) const;

  /// The measured time of `collective` over `devices` members with `bytes`
  /// per device, interpolated the same way by bytes; samples must have the
  /// same group size.
  std::optional<double> collectiveSeconds(llvm::StringRef device,
                                          llvm::StringRef collective,
                                          unsigned devices, double bytes) const;

private:
  std::vector<OpSample> opSamples;
  /// "device|dtype|key" -> index into opSamples.
  llvm::StringMap<size_t> opIndex;
};

/// Op time preferring the DB: the op sample of `work.key` when there is one;
/// else the kernel samples' interpolation (measured, marked so) or the
/// roofline, plus the device's op overhead.
OpTime opTime(const DeviceType &type, DType dtype, const OpWork &work,
              const ProfileDB *db);

/// Whether a step's gradient sync may overlap the backward: as `requested`
/// (EvalOptions::overlapGradientSync), unless `db` measured a runtime that
/// does not overlap it.
inline bool overlapsGradientSync(bool requested, const ProfileDB *db) {
  return requested && !(db && db->gradientSyncOverlap == false);
}

/// Reads a DB written by weft-profile (or writeProfileDB), version 1 or 2.
/// Errors are bad input naming the file and the offending entry.
llvm::Expected<ProfileDB> loadProfileDB(llvm::StringRef path);
llvm::Expected<ProfileDB> parseProfileDB(llvm::StringRef text,
                                         llvm::StringRef fileName);
/// Writes `db` as JSON (version 2).
void writeProfileDB(const ProfileDB &db, llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_COST_PROFILEDB_H
