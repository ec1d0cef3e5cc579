#include "core/op/arg.h"

#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace conveyor {

namespace {

constexpr const char* kScalarNames[] = {"bool", "int", "float", "string", "dtype", "layout"};

// A string that YAML would read back as something else (or not at all) gets quoted.
bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* const kSpecial[] = {"true", "false", "yes", "no", "on", "off", "null", "~",
                                         "True", "False", "Yes", "No", "On", "Off", "Null", "NULL",
                                         "TRUE", "FALSE"};
  for (const char* k : kSpecial) {
    if (s == k) return true;
  }
  const char c = s.front();
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == '$' || c == ' ') return true;
  return s.find_first_of(":#{}[],&*!|>'\"%@`\n\t") != std::string::npos || s.back() == ' ';
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string ScalarYaml(bool v) { return v ? "true" : "false"; }
std::string ScalarYaml(int64_t v) { return std::to_string(v); }
std::string ScalarYaml(double v) {
  // Shortest text that reads back to the same double, always with a '.' or exponent so it stays a
  // float when reloaded.
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}
std::string ScalarYaml(const std::string& v) { return NeedsQuotes(v) ? Quote(v) : v; }
std::string ScalarYaml(DType v) { return std::string(DTypeName(v)); }
std::string ScalarYaml(const Layout& v) { return ScalarYaml(std::string(v.str())); }

}  // namespace

std::string ArgTypeName(ArgType type) {
  const int i = static_cast<int>(type);
  return i < 6 ? kScalarNames[i] : std::string("list of ") + kScalarNames[i - 6];
}

bool IsList(ArgType type) { return static_cast<int>(type) >= 6; }

ArgType ElementType(ArgType type) {
  return IsList(type) ? static_cast<ArgType>(static_cast<int>(type) - 6) : type;
}

std::string ArgValue::ToYaml() const {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::vector<bool>>) {
          std::string out = "[";
          for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + ScalarYaml(static_cast<bool>(v[i]));
          return out + "]";
        } else if constexpr (requires { v.begin(); } && !std::is_same_v<V, std::string>) {
          std::string out = "[";
          for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + ScalarYaml(v[i]);
          return out + "]";
        } else {
          return ScalarYaml(v);
        }
      },
      value_);
}

namespace detail {
void ThrowArgTypeMismatch(ArgType have, ArgType want) {
  throw InvalidArgument("argument value: expected " + ArgTypeName(want) + ", the value is " + ArgTypeName(have));
}
}  // namespace detail

}  // namespace conveyor
