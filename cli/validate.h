// `conveyor validate FILE...`: loads each pipeline file and builds its graph without running it.
//
// Each file gets one line on `out`: "FILE: ok (N ops, outputs: a, b)" or the error as the loader
// and Graph::Build report it ("FILE:LINE:COL: op "flip" (flip): unknown argument ..."). Every
// file is checked even after one failed. The graph is built as for a machine with a GPU, so GPU
// placement is checked on machines without one too (`device` overrides that).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace conveyor::cli {

// Returns the number of files with an error.
int ValidateFiles(const std::vector<std::string>& files, const std::vector<std::string>& plugins,
                  std::ostream& out, std::ostream& err);

}  // namespace conveyor::cli
