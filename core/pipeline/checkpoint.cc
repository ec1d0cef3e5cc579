#include "core/pipeline/checkpoint.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "core/error.h"

namespace conveyor {
namespace {

std::string Hash(const std::string& text) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The spec with what does not decide the batches set to fixed values (checkpoint.h).
PipelineSpec Canonical(const PipelineSpec& spec) {
  PipelineSpec c = spec;
  c.seed = 0;
  c.batch_size = 1;
  c.device_id = 0;
  c.num_threads = 1;
  c.prefetch_depth = 1;
  c.graph_capture = false;
  c.cpu_stage_thread = PipelineSpec::StageThread::kAuto;
  for (OpSpec& op : c.ops) {
    if (op.HasArg("shard_id")) op.SetArg("shard_id", ArgValue(int64_t{0}));
    if (op.HasArg("num_shards")) op.SetArg("num_shards", ArgValue(int64_t{1}));
  }
  return c;
}

[[noreturn]] void Bad(int line, const std::string& text, const std::string& what) {
  throw InvalidArgument("checkpoint line " + std::to_string(line) + ": " + what + ", got \"" + text + "\"");
}

}  // namespace

Checkpoint Checkpoint::Fingerprint(const PipelineSpec& spec) {
  const PipelineSpec c = Canonical(spec);
  Checkpoint cp;
  cp.seed = spec.seed;
  cp.batch_size = spec.batch_size;
  cp.graph = Hash(ToYaml(c));
  for (const OpSpec& op : c.ops) {
    PipelineSpec one;
    one.ops = {op};
    // A node's enable:/probability: changes its output: part of the node's hash.
    if (auto it = c.conditions.find(op.name()); it != c.conditions.end()) one.conditions.insert(*it);
    cp.op_hashes.emplace_back(op.name(), Hash(ToYaml(one)));
  }
  return cp;
}

std::string Checkpoint::Serialize() const {
  std::ostringstream out;
  out << "conveyor-checkpoint " << kCheckpointVersion << "\n"
      << "iteration " << iteration << "\n"
      << "seed " << seed << "\n"
      << "batch_size " << batch_size << "\n"
      << "graph " << graph << "\n";
  for (const auto& [node, hash] : op_hashes) out << "op " << node << " " << hash << "\n";
  for (const auto& [node, state] : states) out << "state " << node << " " << state << "\n";
  return out.str();
}

Checkpoint Checkpoint::Parse(const std::string& text) {
  Checkpoint cp;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  bool have_iteration = false, have_graph = false;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (n == 1) {
      if (key != "conveyor-checkpoint") Bad(n, line, "expected \"conveyor-checkpoint VERSION\" (not a checkpoint?)");
      if (rest != std::to_string(kCheckpointVersion)) {
        Bad(n, line, "this build reads checkpoint format version " + std::to_string(kCheckpointVersion));
      }
      continue;
    }
    long long v = 0;
    unsigned long long u = 0;
    char tail = 0;
    if (key == "iteration") {
      if (std::sscanf(rest.c_str(), "%lld%c", &v, &tail) != 1 || v < 0) Bad(n, line, "expected \"iteration N\", N >= 0");
      cp.iteration = v;
      have_iteration = true;
    } else if (key == "seed") {
      if (std::sscanf(rest.c_str(), "%llu%c", &u, &tail) != 1) Bad(n, line, "expected \"seed N\"");
      cp.seed = u;
    } else if (key == "batch_size") {
      if (std::sscanf(rest.c_str(), "%lld%c", &v, &tail) != 1 || v < 1) Bad(n, line, "expected \"batch_size N\"");
      cp.batch_size = v;
    } else if (key == "graph") {
      cp.graph = rest;
      have_graph = !rest.empty();
    } else if (key == "op" || key == "state") {
      const size_t sep = rest.find(' ');
      if (sep == std::string::npos || sep == 0) Bad(n, line, "expected \"" + key + " NODE VALUE\"");
      (key == "op" ? cp.op_hashes : cp.states).emplace_back(rest.substr(0, sep), rest.substr(sep + 1));
    } else {
      Bad(n, line, "unknown key \"" + key + "\" (expected iteration, seed, batch_size, graph, op or state)");
    }
  }
  if (n == 0) throw InvalidArgument("checkpoint: empty (expected \"conveyor-checkpoint 1\" and its lines)");
  if (!have_iteration || !have_graph) throw InvalidArgument("checkpoint: incomplete (no iteration or graph line)");
  return cp;
}

void Checkpoint::CheckMatches(const PipelineSpec& spec) const {
  const Checkpoint here = Fingerprint(spec);
  std::vector<std::string> diffs;
  if (seed != here.seed) {
    diffs.push_back("seed " + std::to_string(seed) + " in the checkpoint, " + std::to_string(here.seed) + " here");
  }
  if (batch_size != here.batch_size) {
    diffs.push_back("batch_size " + std::to_string(batch_size) + " in the checkpoint, " +
                    std::to_string(here.batch_size) + " here");
  }
  const size_t settings = diffs.size();
  if (graph != here.graph) {
    std::map<std::string, std::string> theirs(op_hashes.begin(), op_hashes.end());
    std::map<std::string, std::string> ours(here.op_hashes.begin(), here.op_hashes.end());
    for (const auto& [node, hash] : here.op_hashes) {
      const auto it = theirs.find(node);
      if (it == theirs.end()) {
        diffs.push_back("node \"" + node + "\" is new");
      } else if (it->second != hash) {
        diffs.push_back("node \"" + node + "\" changed (op, device, inputs, outputs, arguments or enable:/probability:)");
      }
    }
    for (const auto& [node, hash] : op_hashes) {
      if (!ours.count(node)) diffs.push_back("node \"" + node + "\" is gone");
    }
    if (diffs.size() == settings) diffs.push_back("the graph differs (pipeline name or device, node order or outputs)");
  }
  if (diffs.empty()) return;
  std::string msg = "pipeline \"" + spec.name + "\": the checkpoint is of another pipeline: ";
  for (size_t i = 0; i < diffs.size(); ++i) msg += (i ? "; " : "") + diffs[i];
  throw InvalidArgument(msg);
}

}  // namespace conveyor
