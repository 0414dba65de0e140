//===- Launch.cpp - Launch scripts for a plan's program -------------------===//
//
// Writes the bash scripts that start every rank of a plan (docs/Emit.md,
// "Launch"). The program checks WORLD_SIZE, RANK, LOCAL_RANK,
// LOCAL_WORLD_SIZE and GROUP_RANK against the plan's mesh, whose device ids
// are node-major: rank r is local device r % L of node r / L. So node K's
// torchrun gets `--node_rank K` with the static rendezvous (the only one
// that honours it; c10d numbers nodes in arrival order), and local.sh sets
// the same variables itself for every rank.
//
// Every script reports its own failures as one line
// `NAME: error: <what>` on stderr and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "weft/Emit/Launch.h"
#include "Spmd/IR/SpmdDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace weft;
using namespace weft::spmd;

namespace {

/// What the scripts need to know about the plan.
struct LaunchMesh {
  int64_t nodes = 0;
  int64_t perNode = 0;
  /// Device type of each node (its class's `type`).
  std::vector<std::string> types;
  std::string fingerprint;

  int64_t devices() const { return nodes * perNode; }
  /// CPU nodes get no GPU: the runtime then uses gloo.
  bool isCpu(int64_t node) const {
    return llvm::StringRef(types[node]).equals_insensitive("cpu");
  }
};

/// One file of the launch folder.
struct LaunchFile {
  std::string name, text;
  bool executable;
};

/// `text` with anything but printable ASCII replaced by '?', for comments.
std::string commentSafe(llvm::StringRef text) {
  std::string out = text.str();
  for (char &c : out)
    if (!llvm::isPrint(c))
      c = '?';
  return out;
}

/// `text` as one bash word: unchanged when it holds only safe characters,
/// else in single quotes.
std::string shellQuote(llvm::StringRef text) {
  bool safe = !text.empty() && llvm::all_of(text, [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("_./:@%+=,-").contains(c);
  });
  if (safe)
    return text.str();
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

/// Whether `host` is a plausible host name or address (also IPv6 in
/// brackets); nothing a shell would interpret.
bool isHost(llvm::StringRef host) {
  return !host.empty() && host.front() != '-' && llvm::all_of(host, [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef(".-_:[]").contains(c);
  });
}

llvm::Expected<LaunchMesh> meshOf(mlir::ModuleOp plan) {
  auto mesh = plan->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  if (!mesh)
    return badInput("the plan has no '{0}' attribute: not an spmd plan",
                    SpmdDialect::kMeshAttr);
  LaunchMesh m;
  m.nodes = mesh.getNumNodes();
  m.perNode = mesh.getDevicesPerNode();
  for (int64_t n = 0; n < m.nodes; ++n) {
    DeviceClassAttr cls = mesh.getClassOfNode(n);
    m.types.push_back(cls ? cls.getType().str() : "unknown");
  }
  if (auto fp =
          plan->getAttrOfType<mlir::StringAttr>(SpmdDialect::kFingerprintAttr))
    m.fingerprint = fp.getValue().str();
  return m;
}

/// "0,1,...,n-1".
std::string indexList(int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i)
    out += (i ? "," : "") + std::to_string(i);
  return out;
}

/// A line describing the plan for the scripts' headers.
void planLine(llvm::raw_ostream &os, const LaunchMesh &m) {
  os << "# The plan: " << m.devices() << " rank(s) = " << m.nodes
     << " node(s) x " << m.perNode << " device(s); rank r is local device "
     << "r % " << m.perNode << " of node r / " << m.perNode << ".\n";
  if (!m.fingerprint.empty())
    os << "# Model fingerprint: " << commentSafe(m.fingerprint) << "\n";
}

/// `fail`, and `here` = the folder holding the script (any working
/// directory), unless `hereExpr` gives it.
void prelude(llvm::raw_ostream &os, llvm::StringRef name,
             llvm::StringRef hereExpr = "") {
  os << "set -u\n"
     << "fail() { echo \"" << name << ": error: $*\" >&2; exit 1; }\n";
  if (hereExpr.empty())
    os << "here=$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd) || "
          "fail \"cannot find the folder of $0\"\n";
  else
    os << "here=" << hereExpr << "\n";
}

/// `py` = $PYTHON, else a python3 on PATH that has torch; `program` = the
/// program's path, which must exist.
void findPythonAndProgram(llvm::raw_ostream &os, const LaunchOptions &opts,
                          llvm::StringRef programHint) {
  os << R"sh(# The Python with torch: $PYTHON, else python3 on PATH if it has torch.
if [ -n "${PYTHON:-}" ]; then
  command -v "$PYTHON" >/dev/null 2>&1 || fail "PYTHON is '$PYTHON', not a program"
  py=$PYTHON
elif command -v python3 >/dev/null 2>&1 &&
  python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' 2>/dev/null; then
  py=python3
else
  fail "no Python with torch on PATH: set PYTHON (e.g. PYTHON=/path/to/venv/bin/python)"
fi
)sh";
  os << "program=";
  if (llvm::sys::path::is_absolute(opts.program))
    os << shellQuote(opts.program);
  else
    os << "\"$here\"/" << shellQuote(opts.program);
  os << "\n[ -f \"$program\" ] || fail \"no program at $program" << programHint
     << "\"\n";
}

/// `extra` = the flags 1.13's torchrun needs on Python 3.11 (its workers'
/// output must be redirected), empty otherwise.
void torchrunCompat(llvm::raw_ostream &os) {
  os << R"sh(# torch 1.13's torchrun on Python >= 3.11 needs its workers' output redirected.
extra=()
if "$py" -c 'import sys, importlib.metadata as m
sys.exit(not (sys.version_info >= (3, 11) and m.version("torch").startswith("1.")))' 2>/dev/null; then
  extra=(--redirects 1 --tee 1)
fi
)sh";
}

const char *kProgramHint =
    " (weftc -o DIR or weft-translate --spmd-to-torch writes it)";

std::string localScript(const LaunchMesh &m, const LaunchOptions &opts) {
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t n = m.devices(), l = m.perNode;
  os << "#!/usr/bin/env bash\n"
     << "# local.sh: runs all " << n
     << " rank(s) of the plan on this machine with gloo, as background\n"
     << "# processes with torchrun's variables set as the mesh has them; "
        "the first rank\n"
     << "# to fail stops the others and its status is the script's.\n"
     << "#\n"
     << "#   local.sh [program flags]      e.g. local.sh --steps 2\n"
     << "#\n"
     << "# Environment: PYTHON (default: python3 on PATH if it has torch), "
        "MASTER_PORT\n"
     << "# (default: a free port).\n";
  planLine(os, m);
  prelude(os, "local.sh");
  findPythonAndProgram(os, opts, kProgramHint);
  os << R"sh(port=${MASTER_PORT:-}
if [ -z "$port" ]; then
  port=$("$py" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])') || fail "cannot find a free port: set MASTER_PORT"
fi
# No GPU: the runtime uses NCCL only when it sees one.
export CUDA_VISIBLE_DEVICES=
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
)sh";
  os << "export WORLD_SIZE=" << n << " LOCAL_WORLD_SIZE=" << l
     << " MASTER_ADDR=127.0.0.1 MASTER_PORT=$port\n"
     << "pids=()\n"
     << "stop() { kill \"${pids[@]}\" 2>/dev/null; wait; }\n"
     << "trap 'stop; exit 130' INT\n"
     << "trap 'stop; exit 143' TERM\n"
     << "for ((rank = 0; rank < " << n << "; rank++)); do\n"
     << "  RANK=$rank LOCAL_RANK=$((rank % " << l << ")) GROUP_RANK=$((rank / "
     << l << ")) \"$py\" \"$program\" \"$@\" &\n"
     << "  pids+=($!)\n"
     << "done\n"
     << "for ((left = " << n << "; left > 0; left--)); do\n"
     << R"sh(  wait -n
  status=$?
  if [ "$status" -ne 0 ]; then
    stop
    exit "$status"
  fi
done
exit 0
)sh";
  return text;
}

/// `master` = node 0's address: WEFT_MASTER_ADDR, else the hosts file's
/// first host (1-node plans: this machine).
void masterAddress(llvm::raw_ostream &os, const LaunchMesh &m,
                   const LaunchOptions &opts) {
  if (!opts.hosts.empty())
    os << "master=${WEFT_MASTER_ADDR:-" << opts.hosts[0] << "}\n";
  else if (m.nodes == 1)
    os << "master=${WEFT_MASTER_ADDR:-127.0.0.1}\n";
  else
    os << "[ -n \"${WEFT_MASTER_ADDR:-}\" ] || fail \"set WEFT_MASTER_ADDR "
          "to node 0's address\"\n"
       << "master=$WEFT_MASTER_ADDR\n";
  os << "port=${WEFT_MASTER_PORT:-" << opts.masterPort << "}\n";
}

std::string nodeScript(const LaunchMesh &m, const LaunchOptions &opts,
                       int64_t node) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string name = "torchrun-node" + std::to_string(node) + ".sh";
  int64_t l = m.perNode, first = node * l;
  os << "#!/usr/bin/env bash\n"
     << "# " << name << ": starts node " << node << " of the plan's " << m.nodes
     << " node(s) under torchrun: rank" << (l > 1 ? "s " : " ") << first;
  if (l > 1)
    os << "-" << first + l - 1;
  os << ", " << l << " " << commentSafe(m.types[node]) << " device(s).\n"
     << "# Run every node's script at the same time, this one on ";
  if (node < int64_t(opts.hosts.size()))
    os << "host " << opts.hosts[node] << ".\n";
  else
    os << "the node that is\n# node " << node
       << " of the cluster spec (the plan's node order).\n";
  os << "#\n"
     << "#   " << name << " [program flags]      e.g. " << name
     << " --steps 100\n"
     << "#\n"
     << "# Environment: WEFT_MASTER_ADDR (node 0's address";
  if (!opts.hosts.empty())
    os << ", default " << opts.hosts[0];
  else if (m.nodes == 1)
    os << ", default 127.0.0.1";
  else
    os << ", required";
  os << "), WEFT_MASTER_PORT\n"
     << "# (default " << opts.masterPort << ")";
  if (!m.isCpu(node))
    os << ", WEFT_CUDA_DEVICES (the GPUs of local ranks 0.." << l - 1
       << ", in order;\n# default " << indexList(l) << ")";
  os << ", PYTHON (default: python3 on PATH if it has torch).\n";
  planLine(os, m);
  prelude(os, name);
  findPythonAndProgram(os, opts, kProgramHint);
  masterAddress(os, m, opts);
  if (m.isCpu(node)) {
    os << "# CPU devices: no GPU, the runtime uses gloo.\n"
       << "export CUDA_VISIBLE_DEVICES=\n";
  } else {
    os << "# Local rank i is mesh device " << first
       << " + i and drives visible GPU i (cuda:LOCAL_RANK).\n"
       << "devices=${WEFT_CUDA_DEVICES:-" << indexList(l) << "}\n"
       << "IFS=, read -r -a list <<<\"$devices\"\n"
       << "[ \"${#list[@]}\" -eq " << l
       << " ] || fail \"WEFT_CUDA_DEVICES is '$devices', node " << node
       << " of the plan has " << l << " GPU(s)\"\n"
       << "export CUDA_VISIBLE_DEVICES=$devices\n";
  }
  torchrunCompat(os);
  os << "exec \"$py\" -m torch.distributed.run --nnodes " << m.nodes
     << " --node_rank " << node << " --nproc_per_node " << l
     << " \\\n  --rdzv_backend static --rdzv_endpoint \"$master:$port\" "
        "${extra[@]+\"${extra[@]}\"} \\\n  \"$program\" \"$@\"\n";
  return text;
}

std::string slurmScript(const LaunchMesh &m, const LaunchOptions &opts) {
  std::string text;
  llvm::raw_string_ostream os(text);
  bool anyGpu = false;
  for (int64_t n = 0; n < m.nodes; ++n)
    anyGpu |= !m.isCpu(n);
  os << "#!/usr/bin/env bash\n"
     << "#SBATCH --job-name=weft\n"
     << "#SBATCH --nodes=" << m.nodes << "\n"
     << "#SBATCH --ntasks-per-node=1\n";
  if (anyGpu)
    os << "#SBATCH --gpus-per-node=" << m.perNode << "\n";
  os << "#\n"
     << "# slurm.sbatch: runs the plan as one Slurm job: one srun task per "
        "node starts\n"
     << "# torchrun; Slurm's node K (SLURM_NODEID, the order of `scontrol "
        "show hostnames`)\n"
     << "# runs the plan's node K, and the job's first host is the "
        "rendezvous. When\n"
     << "# the plan's nodes differ, ask Slurm for hosts in the cluster "
        "spec's order.\n"
     << "#\n"
     << "#   cd DIR/launch && sbatch slurm.sbatch [program flags]\n"
     << "#\n"
     << "# Environment: WEFT_LAUNCH_DIR (this folder; default: where sbatch "
        "ran),\n"
     << "# WEFT_MASTER_PORT (default " << opts.masterPort
     << "), PYTHON (default: python3 on PATH if it has torch).\n";
  planLine(os, m);
  prelude(os, "slurm.sbatch", "${WEFT_LAUNCH_DIR:-${SLURM_SUBMIT_DIR:-$PWD}}");
  os << "[ -n \"${SLURM_JOB_NODELIST:-}\" ] || fail \"not inside a Slurm "
        "job: submit with sbatch slurm.sbatch\"\n";
  findPythonAndProgram(os, opts,
                       " (submit from the launch folder or set "
                       "WEFT_LAUNCH_DIR)");
  os << R"sh(master=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
[ -n "$master" ] || fail "no host in SLURM_JOB_NODELIST '$SLURM_JOB_NODELIST'"
)sh";
  os << "port=${WEFT_MASTER_PORT:-" << opts.masterPort << "}\n";
  if (!anyGpu)
    os << "# CPU devices: no GPU, the runtime uses gloo.\n"
       << "export CUDA_VISIBLE_DEVICES=\n";
  torchrunCompat(os);
  os << "srun --nodes=" << m.nodes
     << " --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c \\\n"
     << "  'py=$1; shift; exec \"$py\" -m torch.distributed.run --node_rank "
        "\"$SLURM_NODEID\" \"$@\"' \\\n"
     << "  weft-node \"$py\" --nnodes " << m.nodes << " --nproc_per_node "
     << m.perNode
     << " --rdzv_backend static \\\n  --rdzv_endpoint \"$master:$port\" "
        "${extra[@]+\"${extra[@]}\"} \"$program\" \"$@\"\n";
  return text;
}

llvm::Expected<std::vector<LaunchFile>> launchFiles(mlir::ModuleOp plan,
                                                    const LaunchOptions &opts) {
  auto mesh = meshOf(plan);
  if (!mesh)
    return mesh.takeError();
  if (opts.masterPort == 0 || opts.masterPort > 65535)
    return badInput("the rendezvous port {0} is not in 1..65535",
                    opts.masterPort);
  if (opts.program.empty())
    return badInput("no program path for the launch scripts");
  if (!opts.hosts.empty() && int64_t(opts.hosts.size()) < mesh->nodes)
    return badInput("{0} host(s) given for the plan's {1} nodes: give one "
                    "host per node, in node order",
                    opts.hosts.size(), mesh->nodes);
  for (const std::string &host : opts.hosts)
    if (!isHost(host))
      return badInput("'{0}' is not a host name or address", host);
  std::vector<LaunchFile> files;
  files.push_back({"local.sh", localScript(*mesh, opts), true});
  for (int64_t n = 0; n < mesh->nodes; ++n)
    files.push_back({"torchrun-node" + std::to_string(n) + ".sh",
                     nodeScript(*mesh, opts, n), true});
  files.push_back({"slurm.sbatch", slurmScript(*mesh, opts), false});
  return files;
}

} // namespace

llvm::Expected<std::vector<std::string>>
weft::readHostsFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return badInput("cannot read hosts file '{0}': {1}", path,
                    buffer.getError().message());
  std::vector<std::string> hosts;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [index, raw] : llvm::enumerate(lines)) {
    llvm::StringRef line = raw.trim();
    if (line.empty() || line.startswith("#"))
      continue;
    if (!isHost(line))
      return badInput("{0}:{1}: '{2}' is not a host name or address (one "
                      "host per line)",
                      path, index + 1, commentSafe(line));
    hosts.push_back(line.str());
  }
  if (hosts.empty())
    return badInput("hosts file '{0}' names no host (one per line, in node "
                    "order)",
                    path);
  return hosts;
}

llvm::Error weft::writeLaunchDir(mlir::ModuleOp plan, const LaunchOptions &opts,
                                 llvm::StringRef dir) {
  auto files = launchFiles(plan, opts);
  if (!files)
    return files.takeError();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return badInput("cannot create '{0}': {1}", dir, ec.message());
  for (const LaunchFile &file : *files) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, file.name);
    std::error_code ec;
    {
      llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
      if (!ec) {
        out << file.text;
        out.close();
        ec = out.error();
        out.clear_error();
      }
    }
    if (!ec)
      ec = llvm::sys::fs::setPermissions(
          path, file.executable ? llvm::sys::fs::perms(0755)
                                : llvm::sys::fs::perms(0644));
    if (ec)
      return badInput("cannot write '{0}': {1}", path, ec.message());
  }
  return llvm::Error::success();
}

llvm::Error weft::emitLaunch(mlir::ModuleOp plan, const LaunchOptions &opts,
                             llvm::raw_ostream &os) {
  auto files = launchFiles(plan, opts);
  if (!files)
    return files.takeError();
  for (const LaunchFile &file : *files)
    os << "# ==> launch/" << file.name << " <==\n" << file.text;
  return llvm::Error::success();
}
