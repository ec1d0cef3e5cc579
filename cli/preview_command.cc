#include "cli/commands.h"
#include "core/error.h"

namespace conveyor::cli {

int PreviewCommand(const PipelineCommand&, const PreviewOptions&, std::ostream&) {
  throw InvalidArgument("preview is not implemented yet");
}

}  // namespace conveyor::cli
