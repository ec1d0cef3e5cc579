// Error context for the tensor and math operators' glue: an InvalidArgument from a plain function
// (shape rules, the expression compiler) comes back naming the node, and the sample or argument.
// The description is built only when something is thrown, so Setup's per-sample loops stay free of
// string work.
#pragma once

#include <string>

#include "core/error.h"
#include "core/op/spec.h"

namespace conveyor::ops {

// Runs `fn`; an E from it is rethrown as InvalidArgument "<node>: <prefix><its message>".
template <typename E = InvalidArgument, typename Fn>
auto ForNode(const OpSpec& spec, const char* prefix, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const E& e) {
    throw InvalidArgument(spec.Describe() + ": " + prefix + e.what());
  }
}

// Runs `fn`; an InvalidArgument from it is rethrown as "<node>: sample <i>: <its message>".
template <typename Fn>
auto ForSample(const OpSpec& spec, int sample, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(spec.Describe() + ": sample " + std::to_string(sample) + ": " + e.what());
  }
}

}  // namespace conveyor::ops
