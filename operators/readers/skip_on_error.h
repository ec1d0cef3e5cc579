// `on_error: skip` for a decoder fed straight by a reader (decoders.image, decoders.video): the one
// place that ties the two together (docs/executor.md, "Re-filling a batch").
//
//   decoder's ConnectInput ──► Connect: the producer must be a ReaderOp; it runs the decoder's
//                              SampleCheck on every file, skipping and replacing those that fail
//                              before they enter a batch
//   decoder's Setup / Run  ──► Guard(input, f): a SampleError from f (what only decoding finds)
//                              makes the reader skip that file from now on (RejectSample) and
//                              becomes SampleRejected, so the executor redoes the iteration and
//                              the reader's Setup puts the next file in its place
//
// Before Connect (on_error: error) Guard lets every error through as it is.
#pragma once

#include <string>

#include "core/error.h"
#include "core/op/operator.h"
#include "core/tensor/tensor_list.h"
#include "operators/readers/reader_op.h"

namespace conveyor::ops {

class SkipOnError {
 public:
  // Input `input` of `consumer` reads output `output` of `producer` (ConnectInput's arguments).
  // Throws InvalidArgument naming both nodes when the producer is not a reader, or (from the
  // reader) when that output is not each file's bytes or the reader reads ahead.
  void Connect(const OpSpec& consumer, int input, const OpSpec& producer_spec, Operator* producer, int output,
               ReaderOp::SampleCheck check);
  bool connected() const { return reader_ != nullptr; }

  // Runs f; once connected, a SampleError about a sample of `input` that carries its reader
  // index becomes SampleRejected (the reader told first). Anything else passes through.
  template <typename F>
  auto Guard(const TensorListCPU& input, F&& f) const -> decltype(f()) {
    try {
      return f();
    } catch (const SampleError& e) {
      Reject(input, e);
    }
  }

 private:
  // Called from Guard's handler: rethrows `e` when it cannot be rejected.
  [[noreturn]] void Reject(const TensorListCPU& input, const SampleError& e) const;

  ReaderOp* reader_ = nullptr;  // the reader that replaces rejected samples
};

}  // namespace conveyor::ops
