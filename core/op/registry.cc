#include "core/op/registry.h"

#include <algorithm>

#include "core/error.h"
#include "core/op/plugin.h"
#include "core/util/strings.h"

namespace conveyor {

namespace {
// Set while a plugin loads on this thread (see OpRegistry::SetCapture).
thread_local OpRegistry::Pending* tls_capture = nullptr;
}  // namespace

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry;  // never destroyed: static registrations outlive exit order
  return *registry;
}

OpRegistry::Pending* OpRegistry::SetCapture(Pending* pending) { return std::exchange(tls_capture, pending); }

void OpRegistry::Register(OpSchema schema, OperatorFactory factory, std::string origin) {
  if (tls_capture != nullptr && this == &Global()) {
    // Inside a plugin's dlopen: a throw here would terminate the process, so checks wait for
    // Commit, which the loader turns into a PluginError.
    tls_capture->entries.push_back({std::move(schema), std::move(factory), std::move(origin)});
    return;
  }
  schema.Validate();
  if (!factory) throw InvalidArgument("op \"" + schema.name() + "\": registered without a factory");
  std::lock_guard lock(mutex_);
  CheckNotRegistered(schema.name(), origin);
  const std::string name = schema.name();
  entries_[name] = std::make_unique<Entry>(Entry{std::move(schema), std::move(factory), std::move(origin)});
}

void OpRegistry::CheckNotRegistered(const std::string& name, const std::string& origin) const {
  if (auto it = entries_.find(name); it != entries_.end()) {
    throw InvalidArgument("operator \"" + name + "\" is already registered (by " + it->second->origin +
                          "); a second registration came from " + origin);
  }
}

void OpRegistry::Commit(Pending pending) {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < pending.entries.size(); ++i) {
    const Entry& e = pending.entries[i];
    e.schema.Validate();
    if (!e.factory) throw InvalidArgument("op \"" + e.schema.name() + "\": registered without a factory");
    CheckNotRegistered(e.schema.name(), e.origin);
    for (size_t j = 0; j < i; ++j) {
      if (pending.entries[j].schema.name() == e.schema.name()) {
        throw InvalidArgument("operator \"" + e.schema.name() + "\" is registered twice by " + e.origin);
      }
    }
  }
  for (Entry& e : pending.entries) {
    const std::string name = e.schema.name();
    entries_[name] = std::make_unique<Entry>(std::move(e));
  }
}

const OpRegistry::Entry* OpRegistry::Find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.get();
}

const OpRegistry::Entry& OpRegistry::Get(std::string_view name) const {
  if (const Entry* e = Find(name)) return *e;
  throw ConfigError("unknown operator \"" + std::string(name) + "\"" + Suggest(name));
}

std::unique_ptr<Operator> OpRegistry::Create(const OpSpec& spec) const {
  const Entry& e = Get(spec.op());
  spec.Validate();
  return e.factory(spec);
}

std::vector<std::string> OpRegistry::Names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) names.push_back(name);
  return names;
}

// The registered names and those the on-demand plugins would bring (readers.video before its
// plugin is loaded): a typo of one of those gets it suggested too.
std::string OpRegistry::Suggest(std::string_view name) const {
  std::vector<std::string> names = Names();
  for (const OnDemandPlugin& plugin : OnDemandPlugins()) {
    for (const std::string& op : plugin.operators) {
      if (std::find(names.begin(), names.end(), op) == names.end()) names.push_back(op);
    }
  }
  return DidYouMean(name, names);
}

}  // namespace conveyor
