#include "cli/validate.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/plugin.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/yaml_loader.h"
#include "core/util/strings.h"

namespace conveyor::cli {

int ValidateFiles(const std::vector<std::string>& files, const std::vector<std::string>& plugins,
                  std::ostream& out, std::ostream& err) {
  for (const std::string& plugin : plugins) LoadPlugin(plugin);
  int failed = 0;
  for (const std::string& file : files) {
    try {
      const PipelineSpec spec = LoadPipelineFile(file);
      GraphOptions options;
      options.has_gpu = true;  // check GPU placement whatever this machine has
      const Graph graph = Graph::Build(spec, options);
      out << file << ": ok (" << graph.nodes().size() << " ops, outputs: " << Join(spec.outputs, ", ") << ")";
      // A python_function's function is registered by the application at run time: a file can be
      // valid and still not run under `conveyor run` (which registers none), so say which it needs.
      std::vector<std::string> functions;
      for (const OpSpec& op : spec.ops) {
        const auto it = op.args().find("function");
        if (op.op() == "python_function" && it != op.args().end()) {
          functions.push_back("\"" + it->second.As<std::string>() + "\" (node \"" + op.name() + "\")");
        }
      }
      if (!functions.empty()) {
        out << "; needs functions the application registers before building it: " << Join(functions, ", ")
            << " (conveyor run cannot call user code)";
      }
      out << "\n";
    } catch (const Error& e) {
      ++failed;
      const std::string what = e.what();
      // Loader and graph errors already start with the file name; others get it here.
      err << (what.rfind(file, 0) == 0 ? what : file + ": " + what) << "\n";
    }
  }
  return failed;
}

}  // namespace conveyor::cli
