#include "core/capi/function_registry.h"

#include <utility>

#include "core/error.h"
#include "core/util/strings.h"

namespace conveyor::capi {

FunctionRegistry& FunctionRegistry::Global() {
  static auto* registry = new FunctionRegistry;
  return *registry;
}

void FunctionRegistry::Register(std::shared_ptr<RegisteredFunction> function) {
  std::shared_ptr<RegisteredFunction> replaced;  // dropped outside the lock: its destroy may call us
  std::lock_guard lock(mutex_);
  std::shared_ptr<RegisteredFunction>& slot = functions_[function->name()];
  replaced = std::exchange(slot, std::move(function));
}

void FunctionRegistry::Unregister(const std::string& name) {
  std::shared_ptr<RegisteredFunction> removed;
  {
    std::lock_guard lock(mutex_);
    const auto it = functions_.find(name);
    if (it == functions_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, f] : functions_) names.push_back(n);
      throw InvalidArgument("name: expected a registered function (" +
                            (names.empty() ? std::string("none is") : Join(names, ", ") + " are") +
                            "), got \"" + name + "\"");
    }
    removed = std::move(it->second);
    functions_.erase(it);
  }
}

std::shared_ptr<RegisteredFunction> FunctionRegistry::Find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

std::vector<std::string> FunctionRegistry::Names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, f] : functions_) names.push_back(name);
  return names;
}

std::string RegisteredNamesText() {
  const std::vector<std::string> names = FunctionRegistry::Global().Names();
  return names.empty() ? "none" : Join(names, ", ");
}

}  // namespace conveyor::capi
