// Deliberately broken plugins for the loader's error tests; BROKEN_KIND selects which.
#include "core/op/plugin.h"

namespace {

using namespace conveyor;  // NOLINT

class NothingOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace&) override { return {}; }
};

}  // namespace

#if BROKEN_KIND == 1  // not a plugin: a shared library without Conveyor's symbols
extern "C" int some_unrelated_function() { return 42; }
#elif BROKEN_KIND == 2  // built for another ABI; its static registration must never land
const OperatorRegistration<NothingOp> kRegistration(OpSchema("broken.wrong_abi").Backends({Device::kCpu}));
extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION + 998; }
extern "C" void conveyor_plugin_register(PluginRegistrar*) {}
#elif BROKEN_KIND == 3  // registers "copy", which the host already has (through a static object)
const OperatorRegistration<NothingOp> kFresh(OpSchema("broken.fresh").Backends({Device::kCpu}));
const OperatorRegistration<NothingOp> kDuplicate(OpSchema("copy").Backends({Device::kCpu}));
extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION; }
extern "C" void conveyor_plugin_register(PluginRegistrar*) {}
#elif BROKEN_KIND == 4  // the ABI symbol but no register function
extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION; }
#elif BROKEN_KIND == 5  // needs a symbol no host provides (as a plugin whose library is missing)
extern "C" uint32_t conveyor_test_symbol_no_host_has();
extern "C" uint32_t conveyor_plugin_abi_version() { return conveyor_test_symbol_no_host_has(); }
extern "C" void conveyor_plugin_register(PluginRegistrar*) {}
#endif
