#include "core/pipeline/conditions.h"

#include <map>

#include "core/error.h"
#include "core/util/strings.h"

namespace conveyor {

namespace {

constexpr char kCoinOp[] = "random.coin_flip";
constexpr char kSelectOp[] = "select";

// The key the node used ("enable" or "probability"): its position leads every message.
std::string KeyOf(const NodeCondition& c) { return c.probability ? "probability" : "enable"; }

// Why `producer` cannot give one bool/int scalar per sample, from what its spec declares; ""
// when nothing says so (select checks the data itself on every batch).
std::string DeclaredNotAScalar(const OpSpec& producer) {
  if (producer.op() == "external_source") {
    const int64_t ndim = producer.Arg<int64_t>("ndim");
    if (ndim > 0) return producer.Describe() + " declares ndim: " + std::to_string(ndim);
    const DType dtype = producer.Arg<DType>("dtype");
    if (IsFloatingPoint(dtype)) return producer.Describe() + " declares dtype: " + std::string(DTypeName(dtype));
  } else if (producer.op() == kCoinOp || producer.op() == "random.uniform" || producer.op() == "random.normal") {
    if (producer.op() != kCoinOp) return producer.Describe() + " draws floating-point values";
    const auto shape = producer.Arg<std::vector<int64_t>>("shape");
    if (!shape.empty()) return producer.Describe() + " draws shape " + ArgValue(shape).ToYaml() + " per sample";
  }
  return "";
}

class Expander {
 public:
  Expander(const PipelineSpec& spec, const OpRegistry& registry, const std::function<Device(const OpSpec&)>& placed)
      : spec_(spec), registry_(registry), placed_(placed) {
    for (const OpSpec& op : spec.ops) {
      for (const std::string& out : op.outputs()) {
        producers_.emplace(out, &op);
        output_names_.push_back("$" + out);
      }
    }
  }

  std::vector<OpSpec> Run() const {
    for (const auto& [name, condition] : spec_.conditions) {
      bool found = false;
      for (const OpSpec& op : spec_.ops) found = found || op.name() == name;
      if (!found) {
        std::vector<std::string> names;
        for (const OpSpec& op : spec_.ops) names.push_back(op.name());
        throw ConfigError("pipeline \"" + spec_.name + "\": a condition names node \"" + name +
                          "\", which the pipeline does not have" + DidYouMean(name, names));
      }
    }
    std::vector<OpSpec> ops;
    for (const OpSpec& op : spec_.ops) {
      const auto it = spec_.conditions.find(op.name());
      if (it == spec_.conditions.end()) {
        ops.push_back(op);
        continue;
      }
      Expand(op, it->second, ops);
    }
    return ops;
  }

 private:
  [[noreturn]] void Fail(const OpSpec& op, const NodeCondition& c, const std::string& what) const {
    throw SpecError(op, KeyOf(c) + ":key", KeyOf(c) + ": " + what);
  }

  void Check(const OpSpec& op, const NodeCondition& c) const {
    if (c.probability.has_value() == !c.enable.empty()) Fail(op, c, "give enable: or probability:, exactly one");
    if (c.probability && !(*c.probability >= 0.0 && *c.probability <= 1.0)) {
      throw SpecError(op, "probability", "probability: expected a value in [0, 1], got " +
                                             ArgValue(*c.probability).ToYaml());
    }
    const OpRegistry::Entry* entry = registry_.Find(op.op());
    if (entry == nullptr) return;  // Graph::Build names the unknown operator
    const OpSchema& schema = entry->schema;
    const std::string pass = "unselected samples pass the node's first input through unchanged, ";
    if (op.inputs().empty()) Fail(op, c, pass + "but " + op.Describe() + " has no input");
    if (op.outputs().size() != 1) {
      Fail(op, c, pass + "so the node must have one output; it has " + std::to_string(op.outputs().size()) + " (" +
                      Join(op.outputs(), ", ") + ")");
    }
    if (schema.InputAt(0).placement == Placement::kHost) {
      Fail(op, c, pass + "but op \"" + op.op() + "\" reads its first input (\"" + op.inputs()[0] +
                      "\") on the host as another kind of data than it outputs (a decoder's encoded bytes)");
    }
    if (schema.device_to_host()) {
      Fail(op, c, pass + "but op \"" + op.op() + "\" moves its data to the host (a transfer op)");
    }
    if (c.enable.empty()) return;
    const auto producer = producers_.find(c.enable);
    if (producer == producers_.end()) {
      throw SpecError(op, "enable", "enable: \"$" + c.enable + "\" is not produced by any node" +
                                        DidYouMean("$" + c.enable, output_names_));
    }
    const OpSpec& from = *producer->second;
    if (from.name() == op.name()) {
      throw SpecError(op, "enable", "enable: \"$" + c.enable + "\" is the node's own output; feed it from another node");
    }
    if (placed_(from) == Device::kGpu) {
      throw SpecError(op, "enable", "enable: \"$" + c.enable + "\" is produced on the GPU by " + from.Describe() +
                                        "; the mask is read on the host (run that node on cpu)");
    }
    if (const std::string why = DeclaredNotAScalar(from); !why.empty()) {
      throw SpecError(op, "enable", "enable: \"$" + c.enable + "\" must be one bool or integer per sample, but " + why);
    }
  }

  void Expand(const OpSpec& op, const NodeCondition& c, std::vector<OpSpec>& ops) const {
    Check(op, c);
    const std::string key = KeyOf(c);
    const std::string out = op.outputs().at(0);
    // Rebuilt with its one output renamed: OpSpec has no setter for an output, and the rest is kept.
    OpSpec renamed(op.op(), op.name());
    renamed.set_device(op.device());
    for (const std::string& in : op.inputs()) renamed.AddInput(in);
    renamed.AddOutput(ConditionComputedName(op.name()));
    for (const auto& [name, value] : op.args()) renamed.SetArg(name, value);
    for (const auto& [name, source] : op.arg_inputs()) renamed.SetArgInput(name, source);
    CopyLocations(op, renamed);
    ops.push_back(std::move(renamed));

    std::string mask = c.enable;
    if (c.probability) {
      OpSpec coin(kCoinOp, ConditionCoinName(op.name()));
      coin.set_device(DeviceRequest::kCpu);
      coin.SetArg("probability", *c.probability);
      coin.AddOutput(ConditionCoinName(op.name()));
      coin.SetLocation("node", op.Location("probability:key"));
      coin.SetLocation("args.probability", op.Location("probability"));
      mask = coin.outputs()[0];
      ops.push_back(std::move(coin));
    }

    OpSpec select(kSelectOp, ConditionSelectName(op.name()));
    // Where the node runs: its request, or cpu when its op has no GPU backend (auto would
    // otherwise put the select on the GPU behind a CPU node).
    const OpRegistry::Entry* entry = registry_.Find(op.op());
    const bool gpu_backend = entry != nullptr && entry->schema.SupportsDevice(Device::kGpu);
    select.set_device(gpu_backend ? op.device() : DeviceRequest::kCpu);
    select.AddInput(op.inputs()[0]).AddInput(ConditionComputedName(op.name())).AddOutput(out);
    select.SetArgInput("enable", mask);
    select.SetArg("condition_of", op.Describe() + ": " + key);
    select.SetLocation("node", op.Location(key + ":key"));
    select.SetLocation("args.enable", op.Location(key));
    select.SetLocation("inputs.0", op.Location("inputs.0"));
    select.SetLocation("inputs.1", op.Location("outputs.0"));
    select.SetLocation("outputs.0", op.Location("outputs.0"));
    ops.push_back(std::move(select));
  }

  // OpSpec keeps its positions by field; these are the ones a message may name.
  static void CopyLocations(const OpSpec& from, OpSpec& to) {
    for (const char* field : {"node", "op", "name", "device", "inputs", "outputs", "args"}) {
      to.SetLocation(field, from.Location(field));
    }
    for (size_t i = 0; i < from.inputs().size(); ++i) {
      to.SetLocation("inputs." + std::to_string(i), from.Location("inputs." + std::to_string(i)));
    }
    to.SetLocation("outputs.0", from.Location("outputs.0"));
    for (const auto& [name, value] : from.args()) {
      to.SetLocation("args." + name, from.Location("args." + name));
      to.SetLocation("args." + name + ":key", from.Location("args." + name + ":key"));
    }
    for (const auto& [name, source] : from.arg_inputs()) {
      to.SetLocation("args." + name, from.Location("args." + name));
      to.SetLocation("args." + name + ":key", from.Location("args." + name + ":key"));
    }
    for (const char* key : {"enable", "probability"}) {
      to.SetLocation(key, from.Location(key));
      to.SetLocation(std::string(key) + ":key", from.Location(std::string(key) + ":key"));
    }
  }

  const PipelineSpec& spec_;
  const OpRegistry& registry_;
  const std::function<Device(const OpSpec&)>& placed_;
  std::map<std::string, const OpSpec*> producers_;
  std::vector<std::string> output_names_;
};

}  // namespace

std::vector<OpSpec> ExpandConditions(const PipelineSpec& spec, const OpRegistry& registry,
                                     const std::function<Device(const OpSpec&)>& placed) {
  if (spec.conditions.empty()) return spec.ops;
  return Expander(spec, registry, placed).Run();
}

}  // namespace conveyor
