// The process-wide registry behind conveyor_register_function (conveyor_function.h): name → the C
// callback of a python_function node. Nodes bind a shared reference when their pipeline is built,
// so replacing or removing a name never pulls a function from under a running pipeline; the
// callback's destroy runs when the last holder lets go.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/capi/conveyor_function.h"

namespace conveyor::capi {

// One registration: the callback, its user data and the destroy that frees them (run once, by the
// destructor).
class RegisteredFunction {
 public:
  RegisteredFunction(std::string name, conveyor_function_fn fn, void* user_data, conveyor_function_destroy_fn destroy)
      : name_(std::move(name)), fn_(fn), user_data_(user_data), destroy_(destroy) {}
  ~RegisteredFunction() {
    if (destroy_ != nullptr) destroy_(user_data_);
  }
  RegisteredFunction(const RegisteredFunction&) = delete;
  RegisteredFunction& operator=(const RegisteredFunction&) = delete;

  const std::string& name() const { return name_; }
  int32_t Call(conveyor_function_call_t call) const { return fn_(call, user_data_); }

 private:
  std::string name_;
  conveyor_function_fn fn_;
  void* user_data_;
  conveyor_function_destroy_fn destroy_;
};

class FunctionRegistry {
 public:
  // Never destroyed: a destroy callback run from a static destructor at exit could call into a
  // language runtime (Python) that is already gone.
  static FunctionRegistry& Global();

  // Replaces an earlier registration of the name (its holders keep it).
  void Register(std::shared_ptr<RegisteredFunction> function);
  // Throws InvalidArgument naming the registered functions when `name` has none.
  void Unregister(const std::string& name);
  // Null when absent.
  std::shared_ptr<RegisteredFunction> Find(const std::string& name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<RegisteredFunction>> functions_;
};

// "double, noise" or "none".
std::string RegisteredNamesText();

}  // namespace conveyor::capi
