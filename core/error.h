// The exception hierarchy used inside Conveyor. Status codes exist only at the C API boundary.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace conveyor {

// Base of every error Conveyor throws; what() says what was expected, what arrived, and where.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A caller passed a value that breaks a documented contract.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// One sample of a node's batch could not be processed (damaged or unsupported data): what() names
// the node, the sample and its file; sample() is its position in the batch, reason() the bare
// cause. An InvalidArgument to everyone else; a decoder with `on_error: skip` turns it into
// SampleRejected.
class SampleError : public InvalidArgument {
 public:
  SampleError(const std::string& message, int sample, std::string reason)
      : InvalidArgument(message), sample_(sample), reason_(std::move(reason)) {}
  int sample() const { return sample_; }
  const std::string& reason() const { return reason_; }

 private:
  int sample_;
  std::string reason_;
};

// A node refused one sample of its batch after its producer's Setup had fixed the batch (a decoder
// with `on_error: skip` whose decode of that sample failed), and has already told that producer (its
// reader) to skip the sample from now on. The executor answers by redoing the iteration from the
// stateful operators' positions before it (docs/executor.md, "Re-filling a batch"); anywhere else
// it is an InvalidArgument whose message names the sample and the file.
class SampleRejected : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// A pipeline definition (YAML, spec) is wrong; the message carries file:line:col.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime or driver call failed.
class CudaError : public Error {
 public:
  CudaError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// An allocation could not be satisfied.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

// A plugin could not be loaded or registered.
class PluginError : public Error {
 public:
  using Error::Error;
};

// An external array (DLPack, CUDA Array Interface) could not be imported or exported.
class InteropError : public Error {
 public:
  using Error::Error;
};

}  // namespace conveyor
