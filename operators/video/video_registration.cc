// Registers the video operators in a binary that links //operators/video statically (the video
// tests); everything else gets them from the plugin (video_plugin.cc).
#include "core/op/registry.h"
#include "operators/video/video_ops.h"

namespace conveyor::ops::video {
namespace {

struct StaticRegistration {
  StaticRegistration() {
    for (const VideoOperator& op : kVideoOperators) OpRegistry::Global().Register(op.schema(), op.make);
  }
};
const StaticRegistration kRegistration;

}  // namespace
}  // namespace conveyor::ops::video
