//===- PlanCache.cpp - Synthesised plans kept between runs ----------------===//

#include "PlanCache.h"
#include "PlanOutput.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "weft/Support/OpPrintingOff.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include <cstdlib>

using namespace weft;

static std::string cacheRoot() {
  if (const char *dir = std::getenv("WEFT_CACHE_DIR"); dir && *dir)
    return dir;
  llvm::SmallString<128> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    path = xdg;
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    path = home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "weft");
  return std::string(path);
}

std::optional<PlanCache> PlanCache::open(llvm::StringRef key) {
  std::string root = cacheRoot();
  if (root.empty())
    return std::nullopt;
  // Private to the user: plans reveal models and clusters.
  if (!llvm::sys::fs::exists(root) &&
      llvm::sys::fs::create_directories(root, /*IgnoreExisting=*/true,
                                        llvm::sys::fs::owner_all))
    return std::nullopt;
  llvm::SmallString<128> dir(root);
  llvm::sys::path::append(dir, "plans", key);
  return PlanCache(std::string(dir), key.str());
}

/// SHA-256 (hex) of `text`.
static std::string digestOf(llvm::StringRef text) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)),
                     /*LowerCase=*/true);
}

std::string PlanCache::makeKey(llvm::ArrayRef<std::string> parts) {
  llvm::SHA256 hash;
  for (const std::string &part : parts) {
    hash.update(std::to_string(part.size()) + ":");
    hash.update(part);
  }
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

/// The JSON object in `dir`/`name`, or none when missing or damaged.
static std::optional<llvm::json::Object> readObject(llvm::StringRef dir,
                                                    llvm::StringRef name) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  auto text = llvm::MemoryBuffer::getFile(path);
  if (!text)
    return std::nullopt;
  auto value = llvm::json::parse((*text)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  if (llvm::json::Object *o = value->getAsObject())
    return std::move(*o);
  return std::nullopt;
}

/// Writes `value` (indented) to `dir`/`name`, creating `dir` (private to
/// the user).
static llvm::Error writeObject(llvm::StringRef dir, llvm::StringRef name,
                               llvm::json::Object value) {
  if (std::error_code ec = llvm::sys::fs::create_directories(
          dir, /*IgnoreExisting=*/true, llvm::sys::fs::owner_all))
    return llvm::createStringError(ec, "cannot create '%s'", dir.str().c_str());
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  llvm::json::Value v(std::move(value));
  return writeFile(path, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", v) << "\n";
  });
}

static std::optional<SynthesisRecord> parseRecord(const llvm::json::Object *o) {
  if (!o)
    return std::nullopt;
  SynthesisRecord r;
  auto wall = o->getNumber("wall_s");
  auto expansions = o->getInteger("expansions");
  auto gap = o->getNumber("gap");
  auto capped = o->getBoolean("capped");
  auto alternations = o->getInteger("alternations");
  if (!wall || !expansions || !gap || !capped || !alternations)
    return std::nullopt;
  r.wallSeconds = *wall;
  r.expansions = uint64_t(*expansions);
  r.gap = *gap;
  r.capped = *capped;
  r.alternations = unsigned(*alternations);
  r.continuousStepSeconds = o->getNumber("continuous_step_time_s");
  r.integerStepSeconds = o->getNumber("integer_step_time_s");
  return r;
}

std::optional<std::pair<mlir::OwningOpRef<mlir::ModuleOp>, SynthesisRecord>>
PlanCache::lookup(mlir::MLIRContext &context) const {
  llvm::SmallString<128> planPath(dir);
  llvm::sys::path::append(planPath, "plan.mlir");
  std::optional<llvm::json::Object> record = readObject(dir, "synthesis.json");
  std::optional<SynthesisRecord> parsed =
      parseRecord(record ? &*record : nullptr);
  if (!parsed)
    return std::nullopt;
  // An entry is used only when it says it is this key's and its plan is the
  // one it stored: a foreign, moved or edited entry is a miss (and is
  // rewritten).
  auto storedKey = record->getString("key");
  auto storedDigest = record->getString("plan_sha256");
  auto text = llvm::MemoryBuffer::getFile(planPath);
  if (!storedKey || *storedKey != key || !storedDigest || !text ||
      digestOf((*text)->getBuffer()) != *storedDigest)
    return std::nullopt;
  // A plan is spmd ops around the graph's (the graph's dialects are loaded
  // by its import).
  context.getOrLoadDialect<spmd::SpmdDialect>();
  // A damaged plan must not print diagnostics: it is a miss.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  OpPrintingOff unprinted(context);
  mlir::OwningOpRef<mlir::ModuleOp> plan =
      mlir::parseSourceString<mlir::ModuleOp>((*text)->getBuffer(), &context);
  if (!plan || mlir::failed(mlir::verify(*plan)))
    return std::nullopt;
  parsed->cached = true;
  return std::make_pair(std::move(plan), *parsed);
}

llvm::Error PlanCache::store(mlir::ModuleOp plan,
                             const SynthesisRecord &record) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(
          dir, /*IgnoreExisting=*/true, llvm::sys::fs::owner_all))
    return llvm::createStringError(ec, "cannot create '%s'", dir.c_str());
  llvm::SmallString<128> planPath(dir);
  llvm::sys::path::append(planPath, "plan.mlir");
  std::string text;
  llvm::raw_string_ostream os(text);
  plan->print(os);
  os << "\n";
  os.flush();
  if (auto err =
          writeFile(planPath, [&](llvm::raw_ostream &out) { out << text; }))
    return err;
  llvm::json::Object o{{"key", key},
                       {"plan_sha256", digestOf(text)},
                       {"wall_s", record.wallSeconds},
                       {"expansions", int64_t(record.expansions)},
                       {"gap", record.gap},
                       {"capped", record.capped},
                       {"alternations", record.alternations}};
  if (record.continuousStepSeconds)
    o["continuous_step_time_s"] = *record.continuousStepSeconds;
  if (record.integerStepSeconds)
    o["integer_step_time_s"] = *record.integerStepSeconds;
  return writeObject(dir, "synthesis.json", std::move(o));
}

std::optional<std::pair<std::string, double>>
PlanCache::lookupShortfall() const {
  std::optional<llvm::json::Object> o = readObject(dir, "shortfall.json");
  if (!o)
    return std::nullopt;
  auto message = o->getString("message");
  auto overflow = o->getNumber("overflow");
  if (!message || message->empty() || !overflow || *overflow < 0)
    return std::nullopt;
  return std::make_pair(message->str(), *overflow);
}

llvm::Error PlanCache::storeShortfall(llvm::StringRef message,
                                      double overflow) const {
  return writeObject(
      dir, "shortfall.json",
      llvm::json::Object{{"message", message}, {"overflow", overflow}});
}
