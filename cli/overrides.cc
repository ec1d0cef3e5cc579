#include "cli/overrides.h"

#include <cerrno>
#include <cstdlib>

#include "core/error.h"
#include "core/op/schema.h"
#include "core/util/strings.h"

namespace conveyor::cli {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

[[noreturn]] void Expected(ArgType type, const std::string& text) {
  throw ConfigError("expected " + ArgTypeName(type) + ", got \"" + text + "\"");
}

bool ParseBool(const std::string& t) {
  if (t == "true" || t == "True" || t == "1") return true;
  if (t == "false" || t == "False" || t == "0") return false;
  Expected(ArgType::kBool, t);
}

int64_t ParseInt(const std::string& t) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || *end != '\0' || errno == ERANGE) Expected(ArgType::kInt, t);
  return v;
}

double ParseFloat(const std::string& t) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || errno == ERANGE) Expected(ArgType::kFloat, t);
  return v;
}

std::string Unquote(const std::string& t) {
  if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front()) {
    return t.substr(1, t.size() - 2);
  }
  return t;
}

std::vector<std::string> SplitList(std::string t) {
  t = Trim(t);
  if (!t.empty() && t.front() == '[') {
    if (t.back() != ']') throw ConfigError("expected a list like [1, 2], got \"" + t + "\"");
    t = t.substr(1, t.size() - 2);
  }
  std::vector<std::string> items;
  if (Trim(t).empty()) return items;
  size_t start = 0;
  for (;;) {
    const size_t comma = t.find(',', start);
    items.push_back(Unquote(Trim(t.substr(start, comma == std::string::npos ? std::string::npos : comma - start))));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

template <typename T, typename F>
std::vector<T> Each(const std::vector<std::string>& items, F parse) {
  std::vector<T> out;
  for (const std::string& item : items) out.push_back(parse(item));
  return out;
}

DType ParseDTypeValue(const std::string& t) {
  try {
    return ParseDType(t);
  } catch (const Error&) {
    Expected(ArgType::kDType, t);
  }
}

Layout ParseLayoutValue(const std::string& t) {
  try {
    return Layout(std::string_view(t));
  } catch (const Error&) {
    Expected(ArgType::kLayout, t);
  }
}

const char* const kPipelineKeys[] = {"name",           "batch_size", "device",        "device_id",       "num_threads",
                                     "prefetch_depth", "seed",       "graph_capture", "cpu_stage_thread"};

int PositiveInt(const std::string& key, const std::string& text, int min) {
  const int64_t v = ParseInt(text);
  if (v < min || v > (1 << 30)) {
    throw ConfigError("pipeline." + key + " must be an integer >= " + std::to_string(min) + ", got " + text);
  }
  return static_cast<int>(v);
}

void SetPipelineField(PipelineSpec& spec, const std::string& key, const std::string& text) {
  if (key == "name") {
    spec.name = text;
  } else if (key == "batch_size") {
    spec.batch_size = PositiveInt(key, text, 1);
  } else if (key == "device") {
    if (text == "cpu") spec.device = DeviceRequest::kCpu;
    else if (text == "gpu") spec.device = DeviceRequest::kGpu;
    else if (text == "auto") spec.device = DeviceRequest::kAuto;
    else throw ConfigError("expected one of auto, cpu, gpu, got \"" + text + "\"");
  } else if (key == "device_id") {
    spec.device_id = PositiveInt(key, text, 0);
  } else if (key == "num_threads") {
    spec.num_threads = PositiveInt(key, text, 1);
  } else if (key == "prefetch_depth") {
    spec.prefetch_depth = PositiveInt(key, text, 1);
  } else if (key == "seed") {
    const int64_t v = ParseInt(text);
    if (v < 0) throw ConfigError("pipeline.seed must be >= 0, got " + text);
    spec.seed = static_cast<uint64_t>(v);
  } else if (key == "graph_capture") {
    spec.graph_capture = ParseBool(text);
  } else if (key == "cpu_stage_thread") {
    if (text == "auto") {
      spec.cpu_stage_thread = PipelineSpec::StageThread::kAuto;
    } else if (text == "true" || text == "True" || text == "1" || text == "false" || text == "False" || text == "0") {
      spec.cpu_stage_thread = ParseBool(text) ? PipelineSpec::StageThread::kOn : PipelineSpec::StageThread::kOff;
    } else {
      throw ConfigError("expected true, false or auto, got \"" + text + "\"");
    }
  } else {
    std::vector<std::string> keys(std::begin(kPipelineKeys), std::end(kPipelineKeys));
    throw ConfigError("unknown pipeline key \"" + key + "\"" + DidYouMean(key, keys) +
                      " (known: " + Join(keys, ", ") + ")");
  }
}

}  // namespace

ArgValue ParseArgValue(const std::string& raw, ArgType type) {
  const std::string t = IsList(type) ? raw : Unquote(Trim(raw));
  switch (type) {
    case ArgType::kBool: return ParseBool(t);
    case ArgType::kInt: return ParseInt(t);
    case ArgType::kFloat: return ParseFloat(t);
    case ArgType::kString: return t;
    case ArgType::kDType: return ParseDTypeValue(t);
    case ArgType::kLayout: return ParseLayoutValue(t);
    case ArgType::kBoolList: return Each<bool>(SplitList(t), ParseBool);
    case ArgType::kIntList: return Each<int64_t>(SplitList(t), ParseInt);
    case ArgType::kFloatList: return Each<double>(SplitList(t), ParseFloat);
    case ArgType::kStringList: return SplitList(t);
    case ArgType::kDTypeList: return Each<DType>(SplitList(t), ParseDTypeValue);
    case ArgType::kLayoutList: return Each<Layout>(SplitList(t), ParseLayoutValue);
  }
  Expected(type, t);
}

void ApplyOverride(PipelineSpec& spec, const std::string& assignment) {
  const std::string where = "--set " + assignment + ": ";
  const size_t eq = assignment.find('=');
  const size_t dot = assignment.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq) {
    throw ConfigError(where + "expected KEY=VALUE with KEY pipeline.FIELD or NODE.ARGUMENT");
  }
  const std::string scope = assignment.substr(0, dot);
  const std::string key = assignment.substr(dot + 1, eq - dot - 1);
  const std::string value = assignment.substr(eq + 1);
  try {
    if (scope == "pipeline") {
      SetPipelineField(spec, key, Trim(value));
      return;
    }
    OpSpec* node = nullptr;
    std::vector<std::string> nodes;
    for (OpSpec& op : spec.ops) {
      nodes.push_back(op.name());
      if (op.name() == scope) node = &op;
    }
    if (!node) {
      throw ConfigError("no node named \"" + scope + "\"" + DidYouMean(scope, nodes) +
                        " (nodes: " + Join(nodes, ", ") + "; or pipeline.FIELD)");
    }
    const OpSchema& schema = node->schema();
    const ArgSchema* arg = schema.FindArg(key);
    if (!arg) {
      throw ConfigError(node->Describe() + " has no argument \"" + key + "\"" + DidYouMean(key, schema.ArgNames()));
    }
    ArgValue parsed = ParseArgValue(value, arg->type);
    const std::string problem = arg->CheckValue(parsed);
    if (!problem.empty()) throw ConfigError(node->Describe() + ": argument \"" + key + "\": " + problem);
    // A constant replaces a per-sample feed (`horizontal: $mirror`): the override is what was asked for.
    node->ClearArgInput(key);
    node->SetArg(key, std::move(parsed));
  } catch (const ConfigError& e) {
    throw ConfigError(where + e.what());
  }
}

void ApplyOverrides(PipelineSpec& spec, const std::vector<std::string>& assignments) {
  for (const std::string& a : assignments) ApplyOverride(spec, a);
}

}  // namespace conveyor::cli
