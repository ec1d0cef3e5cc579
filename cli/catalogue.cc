#include "cli/catalogue.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "core/util/strings.h"

namespace conveyor::cli {
namespace {

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

// " (one per entry of features)" after an output that repeats per list entry, " (num_outputs of
// them)" after one an int argument counts; `quote` wraps the name.
std::string PerEntry(const OpSchema& schema, const std::string& quote) {
  const std::string& list = schema.output_per_entry_of();
  if (list.empty()) return "";
  const ArgSchema* arg = schema.FindArg(list);
  if (arg != nullptr && arg->type == ArgType::kInt) return " (" + quote + list + quote + " of them)";
  return " (one per entry of " + quote + list + quote + ")";
}

// " (repeats: 1 to 64 inputs in all)" after the input a schema repeats.
std::string Repeats(const OpSchema& schema, const InputSchema& in) {
  if (!schema.repeats_last_input() || &in != &schema.inputs().back()) return "";
  return " (repeats: " + std::to_string(schema.min_inputs()) + " to " + std::to_string(schema.max_inputs()) +
         " inputs in all)";
}

// " (with polygon_masks: true)" after an optional output; `quote` wraps the argument.
std::string EnabledBy(const OutputSchema& out, const std::string& quote) {
  return out.optional() ? " (with " + quote + out.enabled_by + ": true" + quote + ")" : "";
}

std::string Devices(const OpSchema& schema) {
  std::vector<std::string> names;
  for (Device d : schema.backends()) names.emplace_back(DeviceName(d));
  return Join(names, ", ");
}

// The first sentence of a doc string: the index tables keep one line per operator.
std::string Summary(const std::string& doc) {
  const size_t end = doc.find(". ");
  return end == std::string::npos ? doc : doc.substr(0, end + 1);
}

std::string InputConstraints(const InputSchema& in) {
  std::vector<std::string> parts;
  if (!in.layouts.empty()) {
    std::vector<std::string> l;
    for (const Layout& layout : in.layouts) l.emplace_back(layout.str());
    parts.push_back("layouts " + Join(l, ", "));
  }
  if (!in.dtypes.empty()) {
    std::vector<std::string> d;
    for (DType dtype : in.dtypes) d.emplace_back(DTypeName(dtype));
    parts.push_back("dtypes " + Join(d, ", "));
  }
  if (in.placement == Placement::kHost) parts.emplace_back("read on the host");
  return Join(parts, "; ");
}

std::string DefaultText(const ArgSchema& arg) {
  return arg.default_value ? arg.default_value->ToYaml() : std::string("required");
}

// Markdown table cells: a '|' would end the cell and a newline the row.
std::string Cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string Code(const std::string& text) { return text.empty() ? "" : "`" + text + "`"; }

}  // namespace

std::string ArgConstraint(const ArgSchema& arg) {
  if (!arg.choices.empty()) return Join(arg.choices, " | ");
  if (arg.min && arg.max) return "[" + Number(*arg.min) + ", " + Number(*arg.max) + "]";
  if (arg.min) return ">= " + Number(*arg.min);
  if (arg.max) return "<= " + Number(*arg.max);
  return "";
}

std::string CatalogueList(const OpRegistry& registry) {
  std::ostringstream s;
  size_t width = 0;
  for (const std::string& name : registry.Names()) width = std::max(width, name.size());
  for (const std::string& name : registry.Names()) {
    const OpRegistry::Entry& e = registry.Get(name);
    std::string devices = Devices(e.schema) + (e.schema.capturable() ? " (capturable)" : "");
    s << name << std::string(width + 2 - name.size(), ' ') << "[" << devices << "] " << Summary(e.schema.doc());
    if (e.origin != "built-in") s << " (" << e.origin << ")";
    s << "\n";
  }
  return s.str();
}

std::string CataloguePage(const OpRegistry::Entry& entry) {
  const OpSchema& schema = entry.schema;
  std::ostringstream s;
  s << schema.name() << "\n  " << schema.doc() << "\n\n";
  s << "  devices:     " << Devices(schema) << "\n";
  s << "  capturable:  " << (schema.capturable() ? "yes (its GPU work may be captured in a CUDA graph)" : "no") << "\n";
  if (schema.device_to_host()) s << "  transfer:    writes GPU data to host memory\n";
  s << "  origin:      " << entry.origin << "\n";
  s << "\n  inputs:" << (schema.inputs().empty() ? " none" : "") << "\n";
  for (const InputSchema& in : schema.inputs()) {
    const std::string c = InputConstraints(in);
    s << "    " << in.name << Repeats(schema, in) << (c.empty() ? "" : " (" + c + ")") << (in.doc.empty() ? "" : ": " + in.doc)
      << "\n";
  }
  s << "  outputs:" << (schema.outputs().empty() ? " none" : "") << "\n";
  for (const OutputSchema& out : schema.outputs()) {
    s << "    " << out.name << PerEntry(schema, "") << EnabledBy(out, "") << (out.doc.empty() ? "" : ": " + out.doc)
      << "\n";
  }
  s << "  arguments:" << (schema.args().empty() ? " none" : "") << "\n";
  for (const ArgSchema& a : schema.args()) {
    s << "    " << a.name << ": " << ArgTypeName(a.type) << " = " << DefaultText(a);
    const std::string c = ArgConstraint(a);
    if (!c.empty()) s << ", " << (a.choices.empty() ? "range " : "one of ") << c;
    if (a.per_sample == PerSample::kAllowed) s << ", per-sample ($node)";
    if (a.is_path) s << ", path (relative to the YAML file)";
    s << "\n      " << a.doc << "\n";
  }
  return s.str();
}

std::string CatalogueMarkdown(const OpRegistry& registry, const std::vector<std::string>& names_in) {
  const std::vector<std::string> names = names_in.empty() ? registry.Names() : names_in;
  std::ostringstream s;
  s << "# Operators\n\n"
    << "Generated by `conveyor ops --markdown` from the operator schemas; do not edit by hand.\n"
    << "A test (`//tests/cli:ops_markdown_test`) fails when this page is stale: regenerate it with\n"
    << "`bazel run //cli:conveyor -- ops --markdown > docs/operators.md`.\n\n"
    << "Per-sample arguments may be fed by another node's output (`$node` in YAML); capturable\n"
    << "operators may be captured in a CUDA graph and replayed.\n\n";
  s << "| operator | devices | capturable | summary |\n| --- | --- | --- | --- |\n";
  for (const std::string& name : names) {
    const OpSchema& schema = registry.Schema(name);
    std::string anchor;
    for (char c : name) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') anchor += c;
    }
    s << "| [`" << name << "`](#" << anchor << ") | " << Devices(schema) << " | "
      << (schema.capturable() ? "yes" : "no") << " | " << Cell(Summary(schema.doc())) << " |\n";
  }
  for (const std::string& name : names) {
    const OpSchema& schema = registry.Schema(name);
    s << "\n## " << name << "\n\n" << schema.doc() << "\n\n";
    s << "Devices: " << Devices(schema) << ". Capturable: " << (schema.capturable() ? "yes" : "no") << ".";
    if (schema.device_to_host()) s << " Transfer: writes GPU data to host memory.";
    s << "\n\n";
    if (!schema.inputs().empty()) {
      s << "| input | accepts | doc |\n| --- | --- | --- |\n";
      for (const InputSchema& in : schema.inputs()) {
        s << "| `" << in.name << "`" << Repeats(schema, in) << " | " << Cell(InputConstraints(in)) << " | " << Cell(in.doc)
          << " |\n";
      }
      s << "\n";
    }
    if (!schema.outputs().empty()) {
      s << "| output | doc |\n| --- | --- |\n";
      for (const OutputSchema& out : schema.outputs()) {
        s << "| `" << out.name << "`" << PerEntry(schema, "`") << EnabledBy(out, "`") << " | " << Cell(out.doc)
          << " |\n";
      }
      s << "\n";
    }
    if (!schema.args().empty()) {
      s << "| argument | type | default | range / choices | per-sample | doc |\n"
        << "| --- | --- | --- | --- | --- | --- |\n";
      for (const ArgSchema& a : schema.args()) {
        s << "| `" << a.name << "` | " << ArgTypeName(a.type) << " | "
          << (a.default_value ? Code(Cell(a.default_value->ToYaml())) : "required") << " | "
          << Cell(ArgConstraint(a)) << " | " << (a.per_sample == PerSample::kAllowed ? "yes" : "") << " | "
          << Cell(a.doc + (a.is_path ? " (a path, relative to the YAML file)" : "")) << " |\n";
      }
    }
  }
  return s.str();
}

}  // namespace conveyor::cli
