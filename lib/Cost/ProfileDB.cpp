//===- ProfileDB.cpp - Measured op and collective times
//--------------------===//

#include "weft/Cost/ProfileDB.h"
#include "weft/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cmath>

using namespace weft;

namespace {
/// A (size, seconds) point of one series.
struct Point {
  double size, seconds;
};
} // namespace

/// Log-log interpolation in `points` (any order) at `size`.
static std::optional<double> interpolate(std::vector<Point> points,
                                         double size) {
  if (points.empty())
    return std::nullopt;
  std::sort(points.begin(), points.end(),
            [](const Point &a, const Point &b) { return a.size < b.size; });
  if (size <= points.front().size)
    return points.front().seconds;
  if (size >= points.back().size)
    return points.back().seconds * size / points.back().size;
  auto hi =
      std::lower_bound(points.begin(), points.end(), size,
                       [](const Point &p, double s) { return p.size < s; });
  auto lo = hi - 1;
  if (hi->size == size)
    return hi->seconds;
  double f = std::log(size / lo->size) / std::log(hi->size / lo->size);
  return std::exp(std::log(lo->seconds) +
                  f * std::log(hi->seconds / lo->seconds));
}

/// The size a kernel sample is interpolated by.
static double sizeOf(OpClass cls, double flops, double bytes) {
  bool compute = cls == OpClass::Matmul || cls == OpClass::Conv;
  return compute && flops > 0 ? flops : bytes;
}

std::optional<double> ProfileDB::kernelSeconds(llvm::StringRef device,
                                               DType dtype,
                                               const OpWork &work) const {
  std::vector<Point> points;
  for (const KernelSample &k : kernels)
    if (k.device == device && k.opClass == work.opClass && k.dtype == dtype)
      points.push_back({sizeOf(k.opClass, k.flops, k.bytes), k.seconds});
  return interpolate(std::move(points),
                     sizeOf(work.opClass, work.flops, work.bytes));
}

std::optional<double> ProfileDB::collectiveSeconds(llvm::StringRef device,
                                                   llvm::StringRef collective,
                                                   unsigned devices,
                                                   double bytes) const {
  std::vector<Point> points;
  for (const CollectiveSample &c : collectives)
    if (c.device == device && c.collective == collective &&
        c.devices == devices)
      points.push_back({c.bytes, c.seconds});
  return interpolate(std::move(points), bytes);
}

static std::string opIndexKey(llvm::StringRef device, DType dtype,
                              llvm::StringRef key) {
  return (device + "|" + toString(dtype) + "|" + key).str();
}

void ProfileDB::addOp(OpSample sample) {
  std::string k = opIndexKey(sample.device, sample.dtype, sample.key);
  auto [it, inserted] = opIndex.try_emplace(k, opSamples.size());
  if (inserted)
    opSamples.push_back(std::move(sample));
  else
    opSamples[it->second] = std::move(sample);
}

std::optional<double> ProfileDB::opSeconds(llvm::StringRef device, DType dtype,
                                           const OpWork &work) const {
  if (work.key.empty())
    return std::nullopt;
  auto it = opIndex.find(opIndexKey(device, dtype, work.key));
  if (it == opIndex.end())
    return std::nullopt;
  const OpSample &s = opSamples[it->second];
  return work.backward ? s.backwardSeconds : s.forwardSeconds;
}

double ProfileDB::opOverhead(llvm::StringRef device) const {
  auto it = opOverheadSeconds.find(device);
  return it == opOverheadSeconds.end() ? 0 : it->second;
}

OpTime weft::opTime(const DeviceType &type, DType dtype, const OpWork &work,
                    const ProfileDB *db) {
  if (!db)
    return opTime(type, dtype, work, std::nullopt);
  if (std::optional<double> op = db->opSeconds(type.name, dtype, work))
    return opTime(type, dtype, work, op);
  OpTime t =
      opTime(type, dtype, work, db->kernelSeconds(type.name, dtype, work));
  t.seconds += db->opOverhead(type.name);
  return t;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static constexpr llvm::StringLiteral kFormat = "weft-profile-db";
static constexpr int64_t kVersion = 2;

namespace {
/// Reads the fields of one JSON entry, remembering the first problem.
class EntryReader {
public:
  EntryReader(const llvm::json::Object &object, std::string where)
      : object(object), where(std::move(where)) {}

  std::string string(llvm::StringRef key) {
    if (auto s = object.getString(key))
      return s->str();
    fail(key, "a string");
    return "";
  }
  double positive(llvm::StringRef key, bool allowZero = false) {
    std::optional<double> v = object.getNumber(key);
    if (v && std::isfinite(*v) && (*v > 0 || (allowZero && *v == 0)))
      return *v;
    fail(key, allowZero ? "a number >= 0" : "a positive number");
    return 0;
  }
  void fail(llvm::StringRef key, llvm::StringRef expected) {
    if (error.empty())
      error = where + ": field '" + key.str() + "' must be " + expected.str();
  }

  const llvm::json::Object &object;
  std::string where;
  std::string error;
};
} // namespace

static llvm::Error readKernels(const llvm::json::Array &array,
                               llvm::StringRef fileName, ProfileDB &db) {
  for (unsigned i = 0; i < array.size(); ++i) {
    std::string where = llvm::formatv("{0}: kernels[{1}]", fileName, i).str();
    const llvm::json::Object *object = array[i].getAsObject();
    if (!object)
      return badInput("{0}: expected an object", where);
    EntryReader r(*object, where);
    KernelSample k;
    k.device = r.string("device");
    k.kernel = r.string("kernel");
    std::string cls = r.string("op_class"), dtype = r.string("dtype");
    k.flops = r.positive("flops", /*allowZero=*/true);
    k.bytes = r.positive("bytes", /*allowZero=*/true);
    k.seconds = r.positive("seconds");
    if (!r.error.empty())
      return badInput("{0}", r.error);
    auto parsedClass = parseOpClass(cls);
    if (!parsedClass)
      return badInput("{0}: unknown op_class '{1}'", where, cls);
    auto parsedDType = parseDType(dtype);
    if (!parsedDType)
      return badInput("{0}: unknown dtype '{1}'", where, dtype);
    k.opClass = *parsedClass;
    k.dtype = *parsedDType;
    db.kernels.push_back(std::move(k));
  }
  return llvm::Error::success();
}

static llvm::Error readCollectives(const llvm::json::Array &array,
                                   llvm::StringRef fileName, ProfileDB &db) {
  for (unsigned i = 0; i < array.size(); ++i) {
    std::string where =
        llvm::formatv("{0}: collectives[{1}]", fileName, i).str();
    const llvm::json::Object *object = array[i].getAsObject();
    if (!object)
      return badInput("{0}: expected an object", where);
    EntryReader r(*object, where);
    CollectiveSample c;
    c.device = r.string("device");
    c.collective = r.string("collective");
    double devices = r.positive("devices");
    c.bytes = r.positive("bytes");
    c.seconds = r.positive("seconds");
    if (!r.error.empty())
      return badInput("{0}", r.error);
    // Checked before the conversion: beyond unsigned's range a count has
    // no unsigned value.
    if (devices > double(std::numeric_limits<uint32_t>::max()) ||
        devices != std::floor(devices))
      return badInput("{0}: field 'devices' must be a whole number of "
                      "devices, got {1:e}",
                      where, devices);
    c.devices = static_cast<unsigned>(devices);
    db.collectives.push_back(std::move(c));
  }
  return llvm::Error::success();
}

static llvm::Error readOps(const llvm::json::Array &array,
                           llvm::StringRef fileName, ProfileDB &db) {
  for (unsigned i = 0; i < array.size(); ++i) {
    std::string where = llvm::formatv("{0}: ops[{1}]", fileName, i).str();
    const llvm::json::Object *object = array[i].getAsObject();
    if (!object)
      return badInput("{0}: expected an object", where);
    EntryReader r(*object, where);
    OpSample o;
    o.device = r.string("device");
    o.key = r.string("key");
    std::string dtype = r.string("dtype");
    o.forwardSeconds = r.positive("forward_seconds");
    o.backwardSeconds = r.positive("backward_seconds", /*allowZero=*/true);
    if (!r.error.empty())
      return badInput("{0}", r.error);
    auto parsedDType = parseDType(dtype);
    if (!parsedDType)
      return badInput("{0}: unknown dtype '{1}'", where, dtype);
    o.dtype = *parsedDType;
    db.addOp(std::move(o));
  }
  return llvm::Error::success();
}

static llvm::Error readOverheads(const llvm::json::Object &object,
                                 llvm::StringRef fileName, ProfileDB &db) {
  for (const auto &[device, value] : object) {
    std::optional<double> v = value.getAsNumber();
    if (!v || !std::isfinite(*v) || *v < 0)
      return badInput("{0}: op_overhead_seconds.{1} must be a number >= 0",
                      fileName, device.str());
    db.opOverheadSeconds[device.str()] = *v;
  }
  return llvm::Error::success();
}

llvm::Expected<ProfileDB> weft::parseProfileDB(llvm::StringRef text,
                                               llvm::StringRef fileName) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return badInput("{0}: not JSON: {1}", fileName,
                    llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getString("format") != kFormat)
    return badInput("{0}: not a profile DB (expected \"format\": \"{1}\")",
                    fileName, kFormat);
  std::optional<int64_t> version = root->getInteger("version");
  if (!version || *version < 1 || *version > kVersion)
    return badInput("{0}: unsupported profile DB version (expected 1 to {1})",
                    fileName, kVersion);
  ProfileDB db;
  if (auto d = root->getString("description"))
    db.description = d->str();
  if (const llvm::json::Array *k = root->getArray("kernels"))
    if (llvm::Error err = readKernels(*k, fileName, db))
      return err;
  if (const llvm::json::Array *c = root->getArray("collectives"))
    if (llvm::Error err = readCollectives(*c, fileName, db))
      return err;
  if (*version < 2)
    return db;
  if (const llvm::json::Array *o = root->getArray("ops"))
    if (llvm::Error err = readOps(*o, fileName, db))
      return err;
  if (const llvm::json::Object *o = root->getObject("op_overhead_seconds"))
    if (llvm::Error err = readOverheads(*o, fileName, db))
      return err;
  if (const llvm::json::Value *v = root->get("gradient_sync_overlap")) {
    std::optional<bool> b = v->getAsBoolean();
    if (!b)
      return badInput("{0}: gradient_sync_overlap must be true or false",
                      fileName);
    db.gradientSyncOverlap = *b;
  }
  return db;
}

llvm::Expected<ProfileDB> weft::loadProfileDB(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return badInput("{0}: cannot read profile DB: {1}", path,
                    buffer.getError().message());
  return parseProfileDB((*buffer)->getBuffer(), path);
}

void weft::writeProfileDB(const ProfileDB &db, llvm::raw_ostream &os) {
  llvm::json::Array kernels, collectives, ops;
  llvm::json::Object overheads;
  for (const OpSample &o : db.ops())
    ops.push_back(llvm::json::Object{{"device", o.device},
                                     {"dtype", toString(o.dtype)},
                                     {"key", o.key},
                                     {"forward_seconds", o.forwardSeconds},
                                     {"backward_seconds", o.backwardSeconds}});
  for (const auto &entry : db.opOverheadSeconds)
    overheads[entry.getKey()] = entry.getValue();
  for (const KernelSample &k : db.kernels)
    kernels.push_back(llvm::json::Object{{"device", k.device},
                                         {"kernel", k.kernel},
                                         {"op_class", toString(k.opClass)},
                                         {"dtype", toString(k.dtype)},
                                         {"flops", k.flops},
                                         {"bytes", k.bytes},
                                         {"seconds", k.seconds}});
  for (const CollectiveSample &c : db.collectives)
    collectives.push_back(llvm::json::Object{{"device", c.device},
                                             {"collective", c.collective},
                                             {"devices", c.devices},
                                             {"bytes", c.bytes},
                                             {"seconds", c.seconds}});
  llvm::json::Object root{{"format", kFormat},
                          {"version", kVersion},
                          {"description", db.description},
                          {"kernels", std::move(kernels)},
                          {"collectives", std::move(collectives)},
                          {"ops", std::move(ops)},
                          {"op_overhead_seconds", std::move(overheads)}};
  if (db.gradientSyncOverlap)
    root["gradient_sync_overlap"] = *db.gradientSyncOverlap;
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}
