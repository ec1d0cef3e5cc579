// The exception hierarchy used inside Conveyor. Status codes exist only at the C API boundary.
#pragma once

#include <stdexcept>
#include <string>

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
