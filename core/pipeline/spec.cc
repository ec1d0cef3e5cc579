#include "core/pipeline/spec.h"

#include <sstream>

namespace conveyor {

namespace {

// Strings through ArgValue's YAML spelling (quoted when needed), with "${" escaped so that
// environment substitution on reload gives the same text back.
std::string Str(const std::string& s) {
  std::string escaped;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "${") == 0) escaped += '$';
    escaped += s[i];
  }
  return ArgValue(escaped).ToYaml();
}

std::string StrList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Str(items[i]);
  return out + "]";
}

std::string EscapeEnv(const ArgValue& value) {
  if (const auto* s = std::get_if<std::string>(&value.variant())) return Str(*s);
  if (const auto* v = std::get_if<std::vector<std::string>>(&value.variant())) return StrList(*v);
  return value.ToYaml();
}

}  // namespace

SourceLocation PipelineSpec::Location(const std::string& field) const {
  if (auto it = locations.find(field); it != locations.end()) return it->second;
  if (auto it = locations.find("pipeline"); it != locations.end()) return it->second;
  return source_file.empty() ? SourceLocation{} : SourceLocation{source_file, 1, 1};
}

std::string ToYaml(const PipelineSpec& spec) {
  std::ostringstream y;
  y << "pipeline:\n"
    << "  name: " << Str(spec.name) << "\n"
    << "  batch_size: " << spec.batch_size << "\n"
    << "  device: " << DeviceRequestName(spec.device) << "\n"
    << "  device_id: " << spec.device_id << "\n"
    << "  num_threads: " << spec.num_threads << "\n"
    << "  prefetch_depth: " << spec.prefetch_depth << "\n"
    << "  seed: " << spec.seed << "\n"
    << "  graph_capture: " << (spec.graph_capture ? "true" : "false") << "\n";
  // Written only when not auto: checkpoints fingerprint this text, and the key came after them.
  if (spec.cpu_stage_thread != PipelineSpec::StageThread::kAuto) {
    y << "  cpu_stage_thread: " << (spec.cpu_stage_thread == PipelineSpec::StageThread::kOn ? "true" : "false") << "\n";
  }
  y << "plugins: " << StrList(spec.plugins) << "\n";
  y << "ops:\n";
  for (const OpSpec& op : spec.ops) {
    y << "  - op: " << Str(op.op()) << "\n"
      << "    name: " << Str(op.name()) << "\n"
      << "    device: " << DeviceRequestName(op.device()) << "\n"
      << "    inputs: " << StrList(op.inputs()) << "\n"
      << "    outputs: " << StrList(op.outputs()) << "\n";
    if (auto it = spec.conditions.find(op.name()); it != spec.conditions.end()) {
      if (it->second.probability) {
        y << "    probability: " << ArgValue(*it->second.probability).ToYaml() << "\n";
      } else {
        y << "    enable: $" << it->second.enable << "\n";
      }
    }
    if (op.args().empty() && op.arg_inputs().empty()) continue;
    y << "    args:\n";
    for (const auto& [name, value] : op.args()) y << "      " << name << ": " << EscapeEnv(value) << "\n";
    for (const auto& [name, source] : op.arg_inputs()) y << "      " << name << ": $" << source << "\n";
  }
  y << "outputs: " << StrList(spec.outputs) << "\n";
  return y.str();
}

}  // namespace conveyor
