//===- CsvTrace.cpp - Weft's CSV trace format ----------------------------===//
//
// docs/Scheduler.md#csv-traces. A header line names the columns; `#` starts
// a comment line. Columns: job_type, gpus, arrival_s (required), steps or
// duration_s (one of them), deadline_s (seconds after arrival),
// guaranteed_rate (steps/s), weight, gpu_types ('|'-separated).
//
//===----------------------------------------------------------------------===//

#include "ParseNumber.h"
#include "weft/Sched/Workload.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <limits>
#include <map>

using namespace weft;
using namespace weft::sched;
using llvm::StringRef;

static const llvm::StringLiteral kColumns[] = {
    "job_type",        "gpus",       "arrival_s",
    "steps",           "duration_s", "deadline_s",
    "guaranteed_rate", "weight",     "gpu_types"};

llvm::Expected<Workload> sched::parseCsvTrace(StringRef text,
                                              StringRef fileName,
                                              const ThroughputOracle &oracle) {
  Workload workload;
  llvm::SmallVector<StringRef> lines;
  text.split(lines, '\n');
  std::map<std::string, unsigned> column;
  std::string reference = referenceGpuType(oracle);
  for (unsigned lineNo = 0; lineNo < lines.size(); ++lineNo) {
    StringRef line = lines[lineNo].trim();
    if (line.empty() || line.startswith("#"))
      continue;
    std::string where = (fileName + ":" + llvm::Twine(lineNo + 1)).str();
    llvm::SmallVector<StringRef> fields;
    line.split(fields, ',');
    for (StringRef &field : fields)
      field = field.trim();
    if (column.empty()) {
      for (unsigned i = 0; i < fields.size(); ++i) {
        if (!llvm::is_contained(kColumns, fields[i]))
          return badInput(
              "{0}: unknown column '{1}'; known columns: {2}", where, fields[i],
              llvm::join(std::begin(kColumns), std::end(kColumns), ", "));
        if (!column.emplace(fields[i].str(), i).second)
          return badInput("{0}: column '{1}' appears twice", where, fields[i]);
      }
      for (const char *required : {"job_type", "gpus", "arrival_s"})
        if (!column.count(required))
          return badInput("{0}: header lacks the column '{1}'", where,
                          required);
      if (!column.count("steps") && !column.count("duration_s"))
        return badInput("{0}: header needs a 'steps' or 'duration_s' column",
                        where);
      continue;
    }
    if (fields.size() != column.size())
      return badInput("{0}: found {1} fields, expected {2} (one per header "
                      "column)",
                      where, fields.size(), column.size());
    auto get = [&](StringRef name) -> StringRef {
      auto it = column.find(name.str());
      return it == column.end() ? StringRef() : fields[it->second];
    };
    auto number = [&](StringRef name, double &out, bool positive,
                      bool optional) -> llvm::Error {
      StringRef value = get(name);
      if (value.empty() && optional)
        return llvm::Error::success();
      if (parseFinite(value, out) || out < 0 || (positive && out == 0))
        return badInput("{0}: field '{1}': found '{2}', expected a {3} "
                        "number",
                        where, name, value,
                        positive ? "positive" : "non-negative");
      return llvm::Error::success();
    };
    Job job;
    job.id = workload.jobs.size();
    job.origin = where;
    job.type = get("job_type").str();
    double gpus = 0, steps = 0, duration = 0, deadline = 0;
    if (auto err = number("gpus", gpus, true, false))
      return std::move(err);
    // Checked before the conversion: a double beyond unsigned's range has
    // no unsigned value.
    if (gpus > double(std::numeric_limits<uint32_t>::max()) ||
        gpus != std::floor(gpus))
      return badInput("{0}: field 'gpus': found '{1}', expected an integer "
                      "number of GPUs",
                      where, get("gpus"));
    job.scale = unsigned(gpus);
    if (auto err = number("arrival_s", job.arrivalS, false, false))
      return std::move(err);
    if (auto err = number("steps", steps, true, true))
      return std::move(err);
    if (auto err = number("duration_s", duration, true, true))
      return std::move(err);
    if ((steps > 0) == (duration > 0))
      return badInput("{0}: give exactly one of 'steps' and 'duration_s'",
                      where);
    if (auto err = number("deadline_s", deadline, true, true))
      return std::move(err);
    if (auto err = number("guaranteed_rate", job.guaranteedRate, false, true))
      return std::move(err);
    if (auto err = number("weight", job.weight, true, true))
      return std::move(err);
    if (auto err = checkJobType(oracle, job.type, job.scale, where))
      return std::move(err);
    if (duration > 0) {
      std::optional<double> rate =
          oracle.throughput(job.type, job.scale, reference, true);
      if (!rate || *rate <= 0)
        return badInput("{0}: 'duration_s' needs a throughput on '{1}' for "
                        "'{2}' on {3} GPUs",
                        where, reference, job.type, job.scale);
      steps = duration * *rate;
    }
    job.totalSteps = steps;
    if (deadline > 0)
      job.deadlineS = job.arrivalS + deadline;
    llvm::SmallVector<StringRef> types;
    get("gpu_types").split(types, '|', -1, false);
    for (StringRef type : types)
      job.allowedTypes.push_back(type.trim().str());
    workload.jobs.push_back(std::move(job));
  }
  if (workload.jobs.empty())
    return badInput("{0}: no jobs", fileName);
  std::stable_sort(
      workload.jobs.begin(), workload.jobs.end(),
      [](const Job &a, const Job &b) { return a.arrivalS < b.arrivalS; });
  for (unsigned i = 0; i < workload.jobs.size(); ++i)
    workload.jobs[i].id = i;
  return workload;
}
