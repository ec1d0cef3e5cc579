#include "core/pipeline/yaml_loader.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/op/plugin.h"
#include "core/op/registry.h"
#include "core/pipeline/yaml_env.h"
#include "core/util/strings.h"

namespace conveyor {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopLevelKeys = {"pipeline", "plugins", "ops", "outputs"};
const std::vector<std::string> kPipelineKeys = {"name",        "batch_size",     "device", "device_id",
                                                "num_threads", "prefetch_depth", "seed",   "graph_capture",
                                                "cpu_stage_thread"};
const std::vector<std::string> kOpKeys = {"op",      "name", "device",     "inputs",
                                          "outputs", "args", "enable", "probability"};

class Parser {
 public:
  Parser(std::string display_name, std::string base_dir)
      : file_(std::move(display_name)), base_dir_(std::move(base_dir)) {}

  PipelineSpec Parse(const std::string& text);

 private:
  SourceLocation At(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    // yaml-cpp marks are 0-based; an invalid mark (-1) means "no position known".
    return {file_, m.line < 0 ? 1 : m.line + 1, m.column < 0 ? 1 : m.column + 1};
  }
  [[noreturn]] void Fail(const YAML::Node& node, const std::string& what) const {
    throw ConfigError(At(node).ToString() + ": " + what);
  }

  std::string Scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) Fail(node, what + ": expected a single value, got " + KindOf(node));
    return SubstituteEnv(node.Scalar(), At(node).ToString() + ": " + what);
  }
  int64_t Int(const YAML::Node& node, const std::string& what, int64_t min) const;
  bool Bool(const YAML::Node& node, const std::string& what) const;
  std::vector<std::pair<YAML::Node, std::string>> Strings(const YAML::Node& node, const std::string& what) const;
  void CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where) const;
  void CheckUniqueKeys(const YAML::Node& node, const std::string& path, std::set<size_t>& seen, int depth = 0) const;
  std::string ResolvePath(const std::string& path) const {
    // A URL (a shard reader's http(s):// path) is not relative to the file.
    if (path.empty() || fs::path(path).is_absolute() || path.find("://") != std::string::npos) return path;
    return (fs::path(base_dir_.empty() ? "." : base_dir_) / path).lexically_normal().string();
  }
  static std::string KindOf(const YAML::Node& node) {
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a map";
    if (node.IsNull()) return "nothing";
    return "\"" + node.Scalar() + "\"";
  }

  void ParsePipeline(const YAML::Node& node, PipelineSpec& spec) const;
  OpSpec ParseOp(const YAML::Node& node, size_t index) const;
  void ParseCondition(const YAML::Node& node, OpSpec& op, PipelineSpec& spec) const;
  ArgValue ParseArgValue(const YAML::Node& node, const ArgSchema& arg, const OpSpec& spec) const;
  ArgValue ParseScalarArg(const YAML::Node& node, ArgType type, const ArgSchema& arg, const OpSpec& spec) const;

  std::string file_;
  std::string base_dir_;
};

int64_t Parser::Int(const YAML::Node& node, const std::string& what, int64_t min) const {
  const std::string s = Scalar(node, what);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) Fail(node, what + ": expected an integer, got \"" + s + "\"" + EnvNote(node.Scalar()));
  if (v < min) Fail(node, what + ": expected a value >= " + std::to_string(min) + ", got " + s + EnvNote(node.Scalar()));
  return v;
}

bool ParseBoolText(const std::string& s, bool& out) {
  static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On"};
  static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No", "off", "Off"};
  for (const char* t : kTrue) {
    if (s == t) return out = true;
  }
  for (const char* f : kFalse) {
    if (s == f) {
      out = false;
      return true;
    }
  }
  return false;
}

bool Parser::Bool(const YAML::Node& node, const std::string& what) const {
  const std::string s = Scalar(node, what);
  bool v = false;
  if (!ParseBoolText(s, v)) Fail(node, what + ": expected true or false, got \"" + s + "\"" + EnvNote(node.Scalar()));
  return v;
}

std::vector<std::pair<YAML::Node, std::string>> Parser::Strings(const YAML::Node& node,
                                                                const std::string& what) const {
  std::vector<std::pair<YAML::Node, std::string>> out;
  if (node.IsNull()) return out;
  if (node.IsScalar()) {
    out.emplace_back(node, Scalar(node, what));
    return out;
  }
  if (!node.IsSequence()) Fail(node, what + ": expected a list of names, got " + KindOf(node));
  for (const YAML::Node& item : node) out.emplace_back(item, Scalar(item, what));
  return out;
}

void Parser::CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed,
                       const std::string& where) const {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.Scalar();
    bool known = false;
    for (const std::string& a : allowed) known = known || a == key;
    if (!known) Fail(it->first, "unknown " + where + " \"" + key + "\"" + DidYouMean(key, allowed));
  }
}

// yaml-cpp keeps every entry of a map with a repeated key and node["key"] returns the first, so a
// second `pipeline:` or a repeated argument would be dropped without a word: refuse it, naming
// both positions. Walks the whole document (every map, at any depth); `seen` holds the positions
// of collections already walked, so aliases (`*a`) are visited once and cannot blow up the walk.
// Our format nests a few levels; a limit keeps hostile nesting from exhausting the stack.
void Parser::CheckUniqueKeys(const YAML::Node& node, const std::string& path, std::set<size_t>& seen,
                             int depth) const {
  constexpr int kMaxDepth = 64;
  if (!node.IsMap() && !node.IsSequence()) return;
  if (depth > kMaxDepth) {
    Fail(node, "nested more than " + std::to_string(kMaxDepth) + " levels deep (at " + path +
                   "); a pipeline file needs a few");
  }
  if (!seen.insert(node.Mark().pos).second) return;
  const auto child_path = [&](const std::string& step) { return path.empty() ? step : path + step; };
  if (node.IsSequence()) {
    size_t i = 0;
    for (const YAML::Node& item : node) {
      CheckUniqueKeys(item, child_path("[" + std::to_string(i++) + "]"), seen, depth + 1);
    }
    return;
  }
  std::map<std::string, YAML::Node> first;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    const std::string name = key.IsScalar() ? key.Scalar() : "";
    if (key.IsScalar()) {
      if (auto [at, inserted] = first.emplace(name, key); !inserted) {
        Fail(key, "duplicate key \"" + name + "\"" + (path.empty() ? " at the top level" : " in " + path) +
                      ": first at " + At(at->second).ToString() + ", again here; a key may appear once per map");
      }
    }
    CheckUniqueKeys(it->second, child_path((path.empty() ? "" : ".") + name), seen, depth + 1);
  }
}

PipelineSpec Parser::Parse(const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file_ + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": YAML syntax error: " + e.msg);
  }
  PipelineSpec spec;
  spec.source_file = file_;
  if (!root.IsMap()) {
    throw ConfigError(file_ + ":1:1: expected a map with keys pipeline, plugins, ops, outputs; got " +
                      (root.IsNull() ? std::string("an empty document") : KindOf(root)));
  }
  std::set<size_t> seen;
  CheckUniqueKeys(root, "", seen);
  CheckKeys(root, kTopLevelKeys, "top-level key");
  if (const YAML::Node p = root["pipeline"]) ParsePipeline(p, spec);
  // Plugins load first: their operators must be known before ops are checked.
  if (const YAML::Node plugins = root["plugins"]) {
    int i = 0;
    for (const auto& [node, path] : Strings(plugins, "plugins")) {
      const std::string resolved = ResolvePath(path);
      spec.locations["plugins." + std::to_string(i++)] = At(node);
      try {
        LoadPlugin(resolved);
      } catch (const PluginError& e) {
        throw PluginError(At(node).ToString() + ": " + e.what());
      }
      spec.plugins.push_back(resolved);
    }
  }
  const YAML::Node ops = root["ops"];
  if (!ops || ops.IsNull()) throw ConfigError(file_ + ":1:1: no \"ops:\" list: a pipeline needs at least one op");
  if (!ops.IsSequence()) Fail(ops, "ops: expected a list of op entries, got " + KindOf(ops));
  size_t index = 0;
  for (const YAML::Node& op : ops) {
    spec.ops.push_back(ParseOp(op, index++));
    ParseCondition(op, spec.ops.back(), spec);
  }
  if (const YAML::Node outputs = root["outputs"]) {
    int i = 0;
    for (const auto& [node, name] : Strings(outputs, "outputs")) {
      spec.locations["outputs." + std::to_string(i++)] = At(node);
      spec.outputs.push_back(name);
    }
  }
  return spec;
}

void Parser::ParsePipeline(const YAML::Node& node, PipelineSpec& spec) const {
  spec.locations["pipeline"] = At(node);
  if (node.IsNull()) return;
  if (!node.IsMap()) Fail(node, "pipeline: expected a map, got " + KindOf(node));
  CheckKeys(node, kPipelineKeys, "key in pipeline:");
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    const YAML::Node v = it->second;  // a copy: it-> returns a proxy that dies with the statement
    const std::string what = "pipeline." + key;
    spec.locations[what] = At(v);
    if (key == "name") {
      spec.name = Scalar(v, what);
    } else if (key == "batch_size") {
      spec.batch_size = static_cast<int>(Int(v, what, 1));
    } else if (key == "device") {
      const std::string d = Scalar(v, what);
      if (d == "cpu") {
        spec.device = DeviceRequest::kCpu;
      } else if (d == "gpu") {
        spec.device = DeviceRequest::kGpu;
      } else if (d == "auto") {
        spec.device = DeviceRequest::kAuto;
      } else {
        Fail(v, what + ": expected auto, cpu or gpu, got \"" + d + "\"" + DidYouMean(d, {"auto", "cpu", "gpu"}));
      }
    } else if (key == "device_id") {
      spec.device_id = static_cast<int>(Int(v, what, 0));
    } else if (key == "num_threads") {
      spec.num_threads = static_cast<int>(Int(v, what, 1));
    } else if (key == "prefetch_depth") {
      spec.prefetch_depth = static_cast<int>(Int(v, what, 1));
    } else if (key == "seed") {
      spec.seed = static_cast<uint64_t>(Int(v, what, 0));
    } else if (key == "graph_capture") {
      spec.graph_capture = Bool(v, what);
    } else if (key == "cpu_stage_thread") {
      const std::string s = Scalar(v, what);
      bool on = false;
      if (s == "auto") spec.cpu_stage_thread = PipelineSpec::StageThread::kAuto;
      else if (ParseBoolText(s, on)) spec.cpu_stage_thread = on ? PipelineSpec::StageThread::kOn : PipelineSpec::StageThread::kOff;
      else Fail(v, what + ": expected true, false or auto, got \"" + s + "\"" + EnvNote(v.Scalar()));
    }
  }
}

OpSpec Parser::ParseOp(const YAML::Node& node, size_t index) const {
  if (!node.IsMap()) Fail(node, "ops: expected an op entry (a map with \"op:\"), got " + KindOf(node));
  const YAML::Node op_node = node["op"];
  OpSpec spec;
  spec.SetLocation("node", At(node));
  if (!op_node) Fail(node, "op entry " + std::to_string(index) + " has no \"op:\" key");
  spec.set_op(Scalar(op_node, "op"));
  spec.SetLocation("op", At(op_node));
  if (const YAML::Node name = node["name"]) {
    spec.set_name(Scalar(name, "name"));
    spec.SetLocation("name", At(name));
  } else {
    spec.set_name(spec.op() + "_" + std::to_string(index));
  }
  CheckKeys(node, kOpKeys, "key in op entry");
  // An operator of an on-demand plugin (readers.video) loads its plugin here.
  const OpRegistry::Entry* entry = FindOrLoadOperator(spec);
  if (entry == nullptr) {
    throw SpecError(spec, "op", "unknown operator \"" + spec.op() + "\"" + OpRegistry::Global().Suggest(spec.op()));
  }
  if (const YAML::Node device = node["device"]) {
    spec.SetLocation("device", At(device));
    const std::string d = Scalar(device, "device");
    if (d == "cpu") {
      spec.set_device(DeviceRequest::kCpu);
    } else if (d == "gpu") {
      spec.set_device(DeviceRequest::kGpu);
    } else if (d == "auto") {
      spec.set_device(DeviceRequest::kAuto);
    } else {
      throw SpecError(spec, "device",
                      "device: expected cpu, gpu or auto, got \"" + d + "\"" + DidYouMean(d, {"cpu", "gpu", "auto"}));
    }  } else if (!entry->schema.SupportsDevice(Device::kCpu)) {
    // No `device:` means cpu, except for ops that only run on the GPU (to_host): their one backend.
    spec.set_device(DeviceRequest::kGpu);
  }
  for (const char* list : {"inputs", "outputs"}) {
    const YAML::Node n = node[list];
    if (!n) continue;
    spec.SetLocation(list, At(n));
    int i = 0;
    for (const auto& [item, name] : Strings(n, list)) {
      spec.SetLocation(std::string(list) + "." + std::to_string(i++), At(item));
      if (std::string(list) == "inputs") {
        spec.AddInput(name);
      } else {
        spec.AddOutput(name);
      }
    }
  }
  if (const YAML::Node args = node["args"]) {
    spec.SetLocation("args", At(args));
    if (!args.IsNull() && !args.IsMap()) throw SpecError(spec, "args", "args: expected a map, got " + KindOf(args));
    const OpSchema& schema = entry->schema;
    for (auto it = args.begin(); args.IsMap() && it != args.end(); ++it) {
      const std::string key = it->first.Scalar();
      const YAML::Node value = it->second;  // a copy: it-> returns a proxy that dies with the statement
      spec.SetLocation("args." + key + ":key", At(it->first));
      spec.SetLocation("args." + key, At(value));
      const ArgSchema* arg = schema.FindArg(key);
      if (arg == nullptr) {
        throw SpecError(spec, "args." + key + ":key",
                        "unknown argument \"" + key + "\"" + DidYouMean(key, schema.ArgNames()));
      }
      // A plain (unquoted) `$name` feeds a node's output; "$x" in quotes is a literal string.
      if (value.IsScalar() && value.Tag() == "?" && value.Scalar().size() > 1 && value.Scalar()[0] == '$' &&
          value.Scalar()[1] != '{' && value.Scalar()[1] != '$') {
        spec.SetArgInput(key, value.Scalar().substr(1));
      } else {
        spec.SetArg(key, ParseArgValue(value, *arg, spec));
      }
    }
  }
  spec.Validate();
  return spec;
}

// `enable: $name` or `probability: p` on an op entry (docs/yaml.md, "Conditions"). Their
// positions are kept on the node ("enable", "probability"; ":key" for the key) for the checks
// Graph::Build makes once the whole graph is known (conditions.h).
void Parser::ParseCondition(const YAML::Node& node, OpSpec& op, PipelineSpec& spec) const {
  const YAML::Node enable = node["enable"];
  const YAML::Node probability = node["probability"];
  if (!enable && !probability) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key == "enable" || key == "probability") {
      op.SetLocation(key + ":key", At(it->first));
      op.SetLocation(key, At(it->second));
    }
  }
  if (enable && probability) {
    throw SpecError(op, "probability:key",
                    "give enable: or probability:, not both (enable: at " + At(enable).ToString() +
                        "); a node has one condition");
  }
  NodeCondition condition;
  if (enable) {
    const std::string text = Scalar(enable, op.Describe() + ": enable");
    // Like an argument input: a plain (unquoted) `$name`.
    if (enable.Tag() != "?" || text.size() < 2 || text[0] != '$') {
      throw SpecError(op, "enable",
                      "enable: expected $NAME, a node's per-sample bool or integer output (enable: $coin), got \"" +
                          text + "\"");
    }
    condition.enable = text.substr(1);
  } else {
    const std::string text = Scalar(probability, op.Describe() + ": probability");
    char* end = nullptr;
    const double p = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      throw SpecError(op, "probability", "probability: expected a number in [0, 1], got \"" + text + "\"" +
                                             EnvNote(probability.Scalar()));
    }
    if (!(p >= 0.0 && p <= 1.0)) {
      throw SpecError(op, "probability", "probability: expected a value in [0, 1], got " + text + EnvNote(probability.Scalar()));
    }
    condition.probability = p;
  }
  spec.conditions[op.name()] = condition;
}

ArgValue Parser::ParseArgValue(const YAML::Node& node, const ArgSchema& arg, const OpSpec& spec) const {
  const std::string field = "args." + arg.name;
  if (!IsList(arg.type)) {
    if (!node.IsScalar()) {
      throw SpecError(spec, field,
                      "argument \"" + arg.name + "\": expected " + ArgTypeName(arg.type) + ", got " + KindOf(node));
    }
    return ParseScalarArg(node, arg.type, arg, spec);
  }
  if (!node.IsSequence()) {
    throw SpecError(spec, field,
                    "argument \"" + arg.name + "\": expected " + ArgTypeName(arg.type) + " ([a, b, ...]), got " +
                        KindOf(node));
  }
  const ArgType elem = ElementType(arg.type);
  std::vector<ArgValue> items;
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) {
      throw SpecError(spec, field,
                      "argument \"" + arg.name + "\": expected " + ArgTypeName(arg.type) + ", got an element that is " +
                          KindOf(item));
    }
    items.push_back(ParseScalarArg(item, elem, arg, spec));
  }
  auto collect = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> out;
    for (const ArgValue& v : items) out.push_back(v.As<T>());
    return ArgValue(std::move(out));
  };
  switch (elem) {
    case ArgType::kBool:
      return collect(bool{});
    case ArgType::kInt:
      return collect(int64_t{});
    case ArgType::kFloat:
      return collect(double{});
    case ArgType::kString:
      return collect(std::string{});
    case ArgType::kDType:
      return collect(DType{});
    default:
      return collect(Layout{});
  }
}

ArgValue Parser::ParseScalarArg(const YAML::Node& node, ArgType type, const ArgSchema& arg, const OpSpec& spec) const {
  const std::string text = Scalar(node, spec.Describe() + ": argument \"" + arg.name + "\"");
  const auto fail = [&](const std::string& expected) -> ArgValue {
    throw SpecError(spec, "args." + arg.name,
                    "argument \"" + arg.name + "\": expected " + expected + ", got \"" + text + "\"" +
                        EnvNote(node.Scalar()));
  };
  switch (type) {
    case ArgType::kBool: {
      bool v = false;
      return ParseBoolText(text, v) ? ArgValue(v) : fail("bool (true or false)");
    }
    case ArgType::kInt: {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      return ec == std::errc() && end == text.data() + text.size() && !text.empty() ? ArgValue(v) : fail("int");
    }
    case ArgType::kFloat: {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      return !text.empty() && end == text.c_str() + text.size() ? ArgValue(v) : fail("float");
    }
    case ArgType::kString:
      return ArgValue(arg.is_path ? ResolvePath(text) : text);
    case ArgType::kDType:
      try {
        return ArgValue(ParseDType(text));
      } catch (const InvalidArgument& e) {
        throw SpecError(spec, "args." + arg.name, "argument \"" + arg.name + "\": " + e.what() + EnvNote(node.Scalar()));
      }
    default:
      try {
        return ArgValue(Layout(text));
      } catch (const InvalidArgument& e) {
        throw SpecError(spec, "args." + arg.name, "argument \"" + arg.name + "\": " + e.what() + EnvNote(node.Scalar()));
      }
  }
}

}  // namespace

PipelineSpec ParsePipelineYaml(const std::string& text, const std::string& display_name, const std::string& base_dir) {
  return Parser(display_name, base_dir).Parse(text);
}

PipelineSpec LoadPipelineFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the pipeline file");
  std::stringstream text;
  text << in.rdbuf();
  return ParsePipelineYaml(text.str(), path, fs::path(path).parent_path().string());
}

}  // namespace conveyor
