// readers.tfrecord's feature spec: which features of each tf.train.Example become outputs, with
// what type and shape — DALI's FixedLenFeature / VarLenFeature written as one string per output
// (the YAML argument system has lists of strings, not maps):
//
//   features: ["image/encoded: bytes", "image/class/label: int64[1] = -1",
//              "image/object/bbox/xmin: float[]"]
//
// Grammar: `name: type[shape] = default` (spaces optional; the name is everything before the last
// ':' ahead of the '=', so it may hold '/' and ':' but not '=').
//
// | type         | shape       | output (per sample)        | the record must hold                  |
// |--------------|-------------|----------------------------|---------------------------------------|
// | int64, float | (none)      | int64 / float32 [1]        | exactly 1 value                       |
// | int64, float | [d0, d1..]  | int64 / float32 [d0, d1..] | exactly d0*d1*... values (row-major)  |
// | int64, float | []          | int64 / float32 [n]        | any number n (VarLen; missing: n = 0)  |
// | bytes        | (none)      | uint8 [size]               | exactly 1 value (e.g. an encoded JPEG)|
// | bytes        | [d0]        | uint8 [d0, longest]        | exactly d0 values                     |
// | bytes        | []          | uint8 [n, longest]         | any number n (VarLen; missing: [0, 0])|
//
// `string` is a synonym of bytes, `float32` of float. Several bytes values form rows padded with
// zero bytes to the longest (NumPy's fixed-width bytes arrays, dtype `S<longest>`).
// Defaults (fixed shapes only): a number, given to every element, or `[v0, v1, ...]` with one value
// per element; for bytes a text, optionally quoted ("" or ''), given to every value. A missing
// feature takes its default; without one it is an error. VarLen features take no default.
// A feature present with another kind of list (float_list for int64) is an error; one with no
// list set counts as empty.
//
// Every error is InvalidArgument. Spec errors name the list position and what was expected
// (`entry 2 ("label: int32"): expected a type (bytes, string, int64, float, float32), got "int32"`);
// record errors name the record (the caller's `where`), the feature and its spec.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

namespace conveyor::tfexample {
class Example;
class Feature;
}  // namespace conveyor::tfexample

namespace conveyor::ops {

enum class FeatureKind { kBytes, kInt64, kFloat };

struct FeatureSpec {
  std::string text;  // as written, for messages
  std::string name;
  FeatureKind kind = FeatureKind::kBytes;
  bool var_len = false;        // `[]`
  bool has_shape = false;      // brackets with extents given
  std::vector<int64_t> shape;  // the extents (has_shape)
  bool has_default = false;
  std::vector<int64_t> int_default;    // one value (broadcast) or one per element
  std::vector<float> float_default;
  std::string bytes_default;

  // Values a record must hold (fixed shapes): the product of the extents, 1 without brackets.
  int64_t count() const;
  DType dtype() const;
};

// Parses the `features` argument; `where` prefixes every message (the op and the argument).
std::vector<FeatureSpec> ParseFeatureSpecs(const std::vector<std::string>& entries, const std::string& where);
FeatureSpec ParseFeatureSpec(const std::string& entry, size_t position, const std::string& where);

// One feature of one record: the output sample's shape and where its values come from.
struct FeatureValue {
  Shape shape;
  const tfexample::Feature* feature = nullptr;  // null: the default (fixed) or nothing (VarLen)
};

// Finds and checks feature `spec` in `example`; `where` names the record ("\"a.tfrecord\": record 3").
FeatureValue LookupFeature(const FeatureSpec& spec, const tfexample::Example& example, const std::string& where);
// Writes the value's bytes (value.shape elements of spec.dtype()) to `dst`.
void WriteFeature(const FeatureSpec& spec, const FeatureValue& value, void* dst);

}  // namespace conveyor::ops
