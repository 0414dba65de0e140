//===- GavelTrace.cpp - Gavel's tab-separated job traces -----------------===//
//
// 10-field: job_type, command, working_directory, num_steps_arg,
// needs_data_dir, total_steps, scale_factor, priority_weight, SLO,
// arrival_time. 7-field (legacy, msr traces): job_type, command,
// num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor.
//
//===----------------------------------------------------------------------===//

#include "ParseNumber.h"
#include "weft/Sched/Workload.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace weft;
using namespace weft::sched;
using llvm::StringRef;

namespace {
/// Field positions of one format.
struct Layout {
  unsigned steps, scale, arrival;
  int weight, slo;
};
const Layout kTenFields = {5, 6, 9, 7, 8};
const Layout kSevenFields = {4, 6, 5, -1, -1};

llvm::Error fieldError(StringRef where, StringRef field, StringRef value,
                       StringRef expected) {
  return badInput("{0}: field '{1}': found '{2}', expected {3}", where, field,
                  value, expected);
}
} // namespace

llvm::Expected<Workload>
sched::parseGavelTrace(StringRef text, StringRef fileName,
                       const ThroughputOracle &oracle) {
  Workload workload;
  llvm::SmallVector<StringRef> lines;
  text.split(lines, '\n');
  std::string reference = referenceGpuType(oracle);
  for (unsigned lineNo = 0; lineNo < lines.size(); ++lineNo) {
    StringRef line = lines[lineNo].rtrim("\r");
    if (line.trim().empty())
      continue;
    std::string where = (fileName + ":" + llvm::Twine(lineNo + 1)).str();
    llvm::SmallVector<StringRef> fields;
    line.split(fields, '\t');
    const Layout *layout = fields.size() == 10  ? &kTenFields
                           : fields.size() == 7 ? &kSevenFields
                                                : nullptr;
    if (!layout)
      return badInput("{0}: found {1} tab-separated fields, expected 7 "
                      "(legacy) or 10",
                      where, fields.size());
    Job job;
    job.id = workload.jobs.size();
    job.origin = where;
    job.type = fields[0].trim().str();
    double steps = 0;
    if (parseFinite(fields[layout->steps].trim(), steps) || steps <= 0)
      return fieldError(where, "total_steps", fields[layout->steps],
                        "a positive number");
    job.totalSteps = steps;
    if (fields[layout->scale].trim().getAsInteger(10, job.scale) ||
        job.scale == 0)
      return fieldError(where, "scale_factor", fields[layout->scale],
                        "a positive integer");
    if (parseFinite(fields[layout->arrival].trim(), job.arrivalS) ||
        job.arrivalS < 0)
      return fieldError(where, "arrival_time", fields[layout->arrival],
                        "a non-negative number of seconds");
    if (layout->weight >= 0 &&
        (parseFinite(fields[layout->weight].trim(), job.weight) ||
         job.weight <= 0))
      return fieldError(where, "priority_weight", fields[layout->weight],
                        "a positive number");
    if (llvm::Error err = checkJobType(oracle, job.type, job.scale, where))
      return std::move(err);
    if (layout->slo >= 0) {
      double slo = -1;
      if (parseFinite(fields[layout->slo].trim(), slo))
        return fieldError(where, "SLO", fields[layout->slo], "a number");
      // Gavel's SLO is a multiple of the job's isolated run time; we take
      // the run time on the reference GPU type.
      if (slo > 0) {
        std::optional<double> rate =
            oracle.throughput(job.type, job.scale, reference, true);
        if (rate && *rate > 0)
          job.deadlineS = job.arrivalS + slo * job.totalSteps / *rate;
      }
    }
    workload.jobs.push_back(std::move(job));
  }
  if (workload.jobs.empty())
    return badInput("{0}: no jobs", fileName);
  // Gavel's traces are sorted by arrival; keep ids in arrival order anyway.
  std::stable_sort(
      workload.jobs.begin(), workload.jobs.end(),
      [](const Job &a, const Job &b) { return a.arrivalS < b.arrivalS; });
  for (unsigned i = 0; i < workload.jobs.size(); ++i)
    workload.jobs[i].id = i;
  return workload;
}

llvm::Expected<Workload> sched::loadTrace(StringRef path,
                                          const ThroughputOracle &oracle) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return badInput("cannot read trace '{0}': {1}", path,
                    buffer.getError().message());
  if (path.endswith(".csv"))
    return parseCsvTrace((*buffer)->getBuffer(), path, oracle);
  return parseGavelTrace((*buffer)->getBuffer(), path, oracle);
}
