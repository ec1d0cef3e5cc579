#include "operators/readers/skip_on_error.h"

#include <utility>

namespace conveyor::ops {

void SkipOnError::Connect(const OpSpec& consumer, int input, const OpSpec& producer_spec, Operator* producer,
                          int output, ReaderOp::SampleCheck check) {
  // Only a reader can put another file in the place of a skipped one and keep the labels aligned.
  auto* reader = dynamic_cast<ReaderOp*>(producer);
  if (reader == nullptr) {
    throw InvalidArgument(consumer.Describe() + ": argument \"on_error\": skip needs input \"" +
                          consumer.inputs()[static_cast<size_t>(input)] +
                          "\" straight from a reader (readers.file), which reads other files in place of skipped "
                          "ones; it comes from " + producer_spec.Describe());
  }
  reader->SkipSamplesFailing(output, std::move(check), consumer.Describe());
  reader_ = reader;
}

void SkipOnError::Reject(const TensorListCPU& input, const SampleError& e) const {
  if (reader_ == nullptr) throw;
  const SampleSource* source = input.source(e.sample());
  if (source == nullptr || source->index < 0) throw;
  reader_->RejectSample(source->index, e.reason());
  throw SampleRejected(std::string(e.what()) + " (on_error: skip: the reader replaces it and the iteration is redone)");
}

}  // namespace conveyor::ops
