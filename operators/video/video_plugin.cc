// libconveyor_video.so: readers.video and decoders.video as a plugin, so that only pipelines that
// name them load FFmpeg (core/op/plugin_autoload.h loads it on demand; docs/video.md).
#include "core/op/plugin.h"
#include "operators/video/video_ops.h"

extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION; }

extern "C" void conveyor_plugin_register(conveyor::PluginRegistrar* registrar) {
  for (const conveyor::ops::video::VideoOperator& op : conveyor::ops::video::kVideoOperators) {
    registrar->Add(op.schema(), op.make);
  }
}
