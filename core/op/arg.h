// Argument values: the types an operator argument may have and one value type that holds any of
// them.
//
// | ArgType      | C++ type                   | YAML                     |
// |--------------|----------------------------|--------------------------|
// | kBool        | bool                       | true / false             |
// | kInt         | int64_t (any integral T)   | 3                        |
// | kFloat       | double (float, double)     | 0.5, 3                   |
// | kString      | std::string                | RGB                      |
// | kDType       | DType                      | float16                  |
// | kLayout      | Layout                     | CHW                      |
// | k*List       | std::vector<...> of above  | [1, 2, 3]                |
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

namespace conveyor {

enum class ArgType {
  kBool,
  kInt,
  kFloat,
  kString,
  kDType,
  kLayout,
  kBoolList,
  kIntList,
  kFloatList,
  kStringList,
  kDTypeList,
  kLayoutList,
};

// "bool", "int", "float", "string", "dtype", "layout", "list of int", ...
std::string ArgTypeName(ArgType type);
bool IsList(ArgType type);
// The element type of a list type (kIntList → kInt); scalars map to themselves.
ArgType ElementType(ArgType type);

// One argument value of any ArgType. Ints are int64_t and floats double whatever the C++ type the
// schema declared, so a value round-trips through YAML unchanged.
class ArgValue {
 public:
  using Variant = std::variant<bool, int64_t, double, std::string, DType, Layout, std::vector<bool>,
                               std::vector<int64_t>, std::vector<double>, std::vector<std::string>,
                               std::vector<DType>, std::vector<Layout>>;

  ArgValue() = default;
  template <typename T>
  ArgValue(T value) : value_(Normalize(std::move(value))) {}  // NOLINT: implicit by design

  ArgType type() const { return static_cast<ArgType>(value_.index()); }
  const Variant& variant() const { return value_; }

  // The value as T (any integral or floating-point T for numbers, vectors of those for lists).
  // Throws InvalidArgument naming both types when the value holds another type; an int is
  // accepted where a float is asked for.
  template <typename T>
  T As() const;

  // YAML flow text: `true`, `3`, `0.5`, `"RGB"` (strings quoted only when YAML needs it),
  // `float16`, `[1, 2]`.
  std::string ToYaml() const;

  friend bool operator==(const ArgValue& a, const ArgValue& b) { return a.value_ == b.value_; }

 private:
  template <typename T>
  static auto Normalize(T v) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, DType> || std::is_same_v<T, Layout> ||
                  std::is_same_v<T, std::string>) {
      return v;
    } else if constexpr (std::is_same_v<T, const char*> || std::is_same_v<T, std::string_view>) {
      return std::string(v);
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<double>(v);
    } else {
      using E = typename T::value_type;
      std::vector<decltype(Normalize(std::declval<E>()))> out;
      out.reserve(v.size());
      for (const auto& e : v) out.push_back(Normalize(E(e)));
      return out;
    }
  }

  Variant value_;
};

// The ArgType that C++ type T is declared with in a schema (Arg<T>).
template <typename T>
constexpr ArgType ArgTypeOf() {
  if constexpr (std::is_same_v<T, bool>) return ArgType::kBool;
  else if constexpr (std::is_same_v<T, DType>) return ArgType::kDType;
  else if constexpr (std::is_same_v<T, Layout>) return ArgType::kLayout;
  else if constexpr (std::is_same_v<T, std::string>) return ArgType::kString;
  else if constexpr (std::is_integral_v<T>) return ArgType::kInt;
  else if constexpr (std::is_floating_point_v<T>) return ArgType::kFloat;
  else return static_cast<ArgType>(static_cast<int>(ArgTypeOf<typename T::value_type>()) + 6);
}

namespace detail {
[[noreturn]] void ThrowArgTypeMismatch(ArgType have, ArgType want);
}  // namespace detail

template <typename T>
T ArgValue::As() const {
  constexpr ArgType kWant = ArgTypeOf<T>();
  if constexpr (kWant == ArgType::kFloat) {
    if (const auto* i = std::get_if<int64_t>(&value_)) return static_cast<T>(*i);
    if (const auto* d = std::get_if<double>(&value_)) return static_cast<T>(*d);
  } else if constexpr (kWant == ArgType::kInt) {
    if (const auto* i = std::get_if<int64_t>(&value_)) return static_cast<T>(*i);
  } else if constexpr (kWant == ArgType::kFloatList) {
    if (const auto* v = std::get_if<std::vector<double>>(&value_)) return T(v->begin(), v->end());
    if (const auto* v = std::get_if<std::vector<int64_t>>(&value_)) return T(v->begin(), v->end());
  } else if constexpr (kWant == ArgType::kIntList) {
    if (const auto* v = std::get_if<std::vector<int64_t>>(&value_)) return T(v->begin(), v->end());
  } else {
    using Stored = decltype(Normalize(std::declval<T>()));
    if (const auto* v = std::get_if<Stored>(&value_)) return *v;
  }
  detail::ThrowArgTypeMismatch(type(), kWant);
}

}  // namespace conveyor
