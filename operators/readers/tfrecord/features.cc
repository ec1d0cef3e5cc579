#include "operators/readers/tfrecord/features.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "operators/readers/tfrecord/tf_example.pb.h"

namespace conveyor::ops {
namespace {

using tfexample::Feature;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (;;) {
    const size_t comma = s.find(',', begin);
    parts.push_back(Trim(s.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin)));
    if (comma == std::string::npos) return parts;
    begin = comma + 1;
  }
}

const char* KindName(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kBytes:
      return "bytes";
    case FeatureKind::kInt64:
      return "int64";
    case FeatureKind::kFloat:
      return "float";
  }
  return "?";
}

// Parses one number of a default; false when `text` is not wholly one.
bool ParseNumber(const std::string& text, FeatureKind kind, int64_t& as_int, float& as_float) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  if (kind == FeatureKind::kInt64) {
    as_int = std::strtoll(text.c_str(), &end, 10);
  } else {
    const double d = std::strtod(text.c_str(), &end);
    as_float = static_cast<float>(d);
    if (std::isfinite(d) && !std::isfinite(as_float)) return false;  // beyond float's range
  }
  return errno == 0 && end != nullptr && *end == '\0';
}

class SpecParser {
 public:
  SpecParser(const std::string& entry, size_t position, const std::string& where)
      : prefix_(where + ": entry " + std::to_string(position) + " (\"" + entry + "\"): ") {
    spec_.text = entry;
  }

  FeatureSpec Parse() {
    const std::string& text = spec_.text;
    const size_t eq = text.find('=');
    const std::string head = text.substr(0, eq);
    const size_t colon = head.rfind(':');
    if (colon == std::string::npos) Fail("expected \"name: type\", e.g. \"image/class/label: int64[1] = -1\"");
    spec_.name = Trim(head.substr(0, colon));
    if (spec_.name.empty()) Fail("expected a feature name before ':'");
    ParseType(Trim(head.substr(colon + 1)));
    if (eq != std::string::npos) ParseDefault(Trim(text.substr(eq + 1)));
    return spec_;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { throw InvalidArgument(prefix_ + what); }

  void ParseType(const std::string& type_shape) {
    const size_t bracket = type_shape.find('[');
    const std::string type = Trim(type_shape.substr(0, bracket));
    if (type == "bytes" || type == "string") {
      spec_.kind = FeatureKind::kBytes;
    } else if (type == "int64") {
      spec_.kind = FeatureKind::kInt64;
    } else if (type == "float" || type == "float32") {
      spec_.kind = FeatureKind::kFloat;
    } else {
      Fail("expected a type (bytes, string, int64, float, float32) after ':', got \"" + type + "\"");
    }
    if (bracket == std::string::npos) return;
    if (type_shape.back() != ']') Fail("expected the shape to end with ']', got \"" + type_shape.substr(bracket) + "\"");
    const std::string inner = Trim(type_shape.substr(bracket + 1, type_shape.size() - bracket - 2));
    if (inner.empty()) {
      spec_.var_len = true;
      return;
    }
    spec_.has_shape = true;
    for (const std::string& dim : SplitCommas(inner)) {
      int64_t extent = 0;
      float unused = 0;
      if (!ParseNumber(dim, FeatureKind::kInt64, extent, unused) || extent < 1) {
        Fail("expected the shape's extents as integers >= 1, e.g. [2, 3], got \"" + dim + "\"");
      }
      spec_.shape.push_back(extent);
    }
    const size_t max_dims = spec_.kind == FeatureKind::kBytes ? 1 : Shape::kMaxDims;
    if (spec_.shape.size() > max_dims) {
      Fail("expected at most " + std::to_string(max_dims) + (max_dims == 1 ? " extent" : " extents") + " for " +
           KindName(spec_.kind) + " (bytes values form rows: [count]), got " + std::to_string(spec_.shape.size()));
    }
  }

  void ParseDefault(const std::string& text) {
    if (spec_.var_len) Fail("a variable-length feature ([]) takes no default: a missing one is empty");
    spec_.has_default = true;
    if (spec_.kind == FeatureKind::kBytes) {
      std::string value = text;
      if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0]) {
        value = value.substr(1, value.size() - 2);
      }
      spec_.bytes_default = value;
      return;
    }
    std::vector<std::string> items;
    if (!text.empty() && text[0] == '[') {
      if (text.back() != ']') Fail("expected the default list to end with ']', got \"" + text + "\"");
      items = SplitCommas(text.substr(1, text.size() - 2));
      if (static_cast<int64_t>(items.size()) != spec_.count()) {
        Fail("expected a default of " + std::to_string(spec_.count()) + " values (one per element) or one number, got " +
             std::to_string(items.size()));
      }
    } else {
      items = {text};
    }
    for (const std::string& item : items) {
      int64_t i = 0;
      float f = 0;
      if (!ParseNumber(item, spec_.kind, i, f)) {
        Fail(std::string("expected the default as ") + (spec_.kind == FeatureKind::kInt64 ? "an integer" : "a number") +
             " (or a list of them), got \"" + item + "\"");
      }
      spec_.int_default.push_back(i);
      spec_.float_default.push_back(f);
    }
  }

  std::string prefix_;
  FeatureSpec spec_;
};

// Values of the list the feature holds (0 when no list is set).
int64_t ValueCount(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kBytesList:
      return f.bytes_list().value_size();
    case Feature::kFloatList:
      return f.float_list().value_size();
    case Feature::kInt64List:
      return f.int64_list().value_size();
    case Feature::KIND_NOT_SET:
      break;
  }
  return 0;
}

bool KindMatches(const Feature& f, FeatureKind kind) {
  switch (f.kind_case()) {
    case Feature::kBytesList:
      return kind == FeatureKind::kBytes;
    case Feature::kFloatList:
      return kind == FeatureKind::kFloat;
    case Feature::kInt64List:
      return kind == FeatureKind::kInt64;
    case Feature::KIND_NOT_SET:
      break;
  }
  return true;
}

const char* ListName(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kBytesList:
      return "a bytes_list";
    case Feature::kFloatList:
      return "a float_list";
    case Feature::kInt64List:
      return "an int64_list";
    case Feature::KIND_NOT_SET:
      break;
  }
  return "no list";
}

int64_t LongestBytes(const Feature* f, const FeatureSpec& spec) {
  if (f == nullptr) return spec.has_default ? static_cast<int64_t>(spec.bytes_default.size()) : 0;
  int64_t longest = 0;
  if (f->kind_case() == Feature::kBytesList) {
    for (const std::string& v : f->bytes_list().value()) longest = std::max(longest, static_cast<int64_t>(v.size()));
  }
  return longest;
}

// The output shape of a record holding `n` values (bytes: their longest is `longest`).
Shape OutputShape(const FeatureSpec& spec, int64_t n, int64_t longest) {
  if (spec.kind == FeatureKind::kBytes) {
    if (!spec.var_len && !spec.has_shape) return Shape{longest};
    return Shape{n, longest};
  }
  if (spec.var_len) return Shape{n};
  if (!spec.has_shape) return Shape{1};
  return Shape(spec.shape);
}

}  // namespace

int64_t FeatureSpec::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

DType FeatureSpec::dtype() const {
  switch (kind) {
    case FeatureKind::kBytes:
      return DType::kUInt8;
    case FeatureKind::kInt64:
      return DType::kInt64;
    case FeatureKind::kFloat:
      return DType::kFloat32;
  }
  return DType::kUInt8;
}

FeatureSpec ParseFeatureSpec(const std::string& entry, size_t position, const std::string& where) {
  return SpecParser(entry, position, where).Parse();
}

std::vector<FeatureSpec> ParseFeatureSpecs(const std::vector<std::string>& entries, const std::string& where) {
  if (entries.empty()) {
    throw InvalidArgument(where + ": expected at least one feature, e.g. [\"image/encoded: bytes\", "
                                  "\"image/class/label: int64[1] = -1\"]");
  }
  std::vector<FeatureSpec> specs;
  for (size_t i = 0; i < entries.size(); ++i) {
    specs.push_back(ParseFeatureSpec(entries[i], i, where));
    for (size_t j = 0; j < i; ++j) {
      if (specs[j].name == specs[i].name) {
        throw InvalidArgument(where + ": entry " + std::to_string(i) + " (\"" + entries[i] + "\"): feature \"" +
                              specs[i].name + "\" is already entry " + std::to_string(j) +
                              " (each feature gives one output)");
      }
    }
  }
  return specs;
}

FeatureValue LookupFeature(const FeatureSpec& spec, const tfexample::Example& example, const std::string& where) {
  const Feature* found = nullptr;
  for (const tfexample::FeatureEntry& entry : example.features().feature()) {
    if (entry.key() == spec.name) found = &entry.value();  // the last one wins, as in TensorFlow's map
  }
  // Built only for a message: lookups run per record and feature.
  const auto about = [&] { return where + ": feature \"" + spec.name + "\" (spec \"" + spec.text + "\")"; };
  if (found == nullptr) {
    if (spec.var_len) return {OutputShape(spec, 0, 0), nullptr};
    if (!spec.has_default) throw InvalidArgument(about() + ": missing from the record, and the spec has no default");
    return {OutputShape(spec, spec.count(), LongestBytes(nullptr, spec)), nullptr};
  }
  const Feature& f = *found;
  if (!KindMatches(f, spec.kind)) {
    throw InvalidArgument(about() + ": expected " + KindName(spec.kind) + " values, the record has " + ListName(f) +
                          " of " + std::to_string(ValueCount(f)));
  }
  const int64_t n = ValueCount(f);
  if (!spec.var_len && n != spec.count()) {
    throw InvalidArgument(about() + ": expected " + std::to_string(spec.count()) + " " + KindName(spec.kind) +
                          (spec.count() == 1 ? " value" : " values") + ", the record has " + std::to_string(n));
  }
  return {OutputShape(spec, n, LongestBytes(&f, spec)), &f};
}

void WriteFeature(const FeatureSpec& spec, const FeatureValue& value, void* dst) {
  const int64_t elements = value.shape.num_elements();
  if (spec.kind == FeatureKind::kBytes) {
    auto* out = static_cast<uint8_t*>(dst);
    const int64_t width = value.shape[value.shape.ndim() - 1];
    const int64_t rows = value.shape.ndim() == 1 ? 1 : value.shape[0];
    for (int64_t r = 0; r < rows; ++r) {
      const std::string& v = value.feature != nullptr ? value.feature->bytes_list().value(static_cast<int>(r))
                                                      : spec.bytes_default;
      std::memcpy(out + r * width, v.data(), v.size());
      std::memset(out + r * width + static_cast<int64_t>(v.size()), 0, static_cast<size_t>(width) - v.size());
    }
    return;
  }
  const bool ints = spec.kind == FeatureKind::kInt64;
  const size_t item = ints ? sizeof(int64_t) : sizeof(float);
  if (value.feature == nullptr || value.feature->kind_case() == Feature::KIND_NOT_SET) {
    if (elements == 0) return;
    for (int64_t e = 0; e < elements; ++e) {
      const size_t k = spec.int_default.size() == 1 ? 0 : static_cast<size_t>(e);
      if (ints) {
        static_cast<int64_t*>(dst)[e] = spec.int_default[k];
      } else {
        static_cast<float*>(dst)[e] = spec.float_default[k];
      }
    }
    return;
  }
  const void* src = ints ? static_cast<const void*>(value.feature->int64_list().value().data())
                         : static_cast<const void*>(value.feature->float_list().value().data());
  if (elements > 0) std::memcpy(dst, src, static_cast<size_t>(elements) * item);
}

}  // namespace conveyor::ops
