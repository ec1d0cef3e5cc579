// `conveyor run`: the loop, the progress display, --save-outputs and the summary.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "cli/npy_writer.h"
#include "cli/progress.h"
#include "cli/session.h"
#include "cli/summary.h"
#include "core/error.h"

namespace conveyor::cli {
namespace {

// "images: float16 (16, 3, 224, 224) CHW" or "... non-uniform, e.g. (480, 640, 3)".
std::string DescribeOutput(const std::string& name, const PipelineOutputs& out, int i) {
  const bool gpu = out.IsGpu(i);
  const int n = gpu ? out.Gpu(i).num_samples() : out.Cpu(i).num_samples();
  const DType dtype = gpu ? out.Gpu(i).dtype() : out.Cpu(i).dtype();
  const Layout layout = gpu ? out.Gpu(i).layout() : out.Cpu(i).layout();
  const bool uniform = gpu ? out.Gpu(i).is_uniform() : out.Cpu(i).is_uniform();
  std::string text = name + ": " + std::string(DTypeName(dtype)) + " " + std::to_string(n) + " samples";
  if (n > 0) {
    const Shape& s = gpu ? out.Gpu(i).shape(0) : out.Cpu(i).shape(0);
    text += uniform ? " of " + s.ToString() : ", non-uniform, first " + s.ToString();
  }
  if (!layout.empty()) text += " " + std::string(layout.str());
  return text + (gpu ? " on the GPU" : " on the host");
}

}  // namespace

int RunCommand(const PipelineCommand& cmd, const RunOptions& options, std::ostream& out) {
  if (!options.save_dir.empty()) MakeDirectories(options.save_dir);
  Session session = Session::Open(cmd);
  const PipelineSpec& spec = session.spec();
  int64_t total = options.iterations;
  if (options.epochs > 0) {
    if (session.epoch_iterations() == 0) {
      throw ConfigError(cmd.path + ": --epochs needs a reader node (readers.*) to define an epoch; use --iterations");
    }
    total = options.epochs * session.epoch_iterations();
  } else if (total == 0) {
    total = session.epoch_iterations() > 0 ? session.epoch_iterations() : 100;
  }
  session.SetIterations(total);

  const std::string device(DeviceName(session.pipeline().graph().device()));
  out << "running " << spec.name << " (" << cmd.path << ") on " << device << ": batch " << spec.batch_size << ", "
      << total << " iterations";
  if (!session.reader().empty()) {
    out << ", epoch of reader \"" << session.reader() << "\": " << session.epoch_samples() << " samples = "
        << session.epoch_iterations() << " iterations";
  }
  out << "\n" << std::flush;

  std::unique_ptr<Progress> progress;
  if (options.progress != ProgressMode::kNone) {
    progress = std::make_unique<Progress>(out, isatty(STDOUT_FILENO) != 0, options.progress_interval_s, total,
                                          session.epoch_iterations(), spec.batch_size);
  }
  RunMeasurements m;
  m.pipeline = spec.name;
  m.device = device;
  m.batch_size = spec.batch_size;
  m.graph_capture = spec.graph_capture;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t it = 0; it < total; ++it) {
    PipelineOutputs outputs = session.Next();
    outputs.Sync();
    if (it == 0) {
      for (int i = 0; i < outputs.size(); ++i) m.outputs.push_back(DescribeOutput(outputs.names()[i], outputs, i));
    }
    if (outputs.size() > 0) {
      m.samples += outputs.IsGpu(0) ? outputs.Gpu(0).num_samples() : outputs.Cpu(0).num_samples();
    }
    m.output_bytes += OutputBytes(outputs);
    if (!options.save_dir.empty()) {
      for (int i = 0; i < outputs.size(); ++i) {
        SaveBatchNpy(options.save_dir, outputs.names()[i], it, OutputToHost(outputs, i));
      }
    }
    outputs.Release();
    ++m.iterations;
    if (progress) progress->Update(it + 1);
    if (!options.checkpoint_file.empty() &&
        (it + 1 == total || (options.checkpoint_every > 0 && (it + 1) % options.checkpoint_every == 0))) {
      WriteCheckpointFile(options.checkpoint_file, session.pipeline().Checkpoint());
    }
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const GraphNode& node : session.pipeline().graph().nodes()) {
    if (node.op() == "python_function") m.function_nodes.push_back(node.name());
    if (node.op().rfind("decoders.", 0) != 0) continue;
    (node.device == Device::kGpu ? m.gpu_decoders : m.cpu_decoders).push_back(node.name());
  }
  m.gpu_decode = ops::ProcessGpuDecoderCounters();
  if (progress) progress->Finish();
  if (session.epoch_iterations() > 0) m.epochs_started = (total - 1) / session.epoch_iterations() + 1;
  out << FormatSummary(m, session.pipeline().counters());
  if (!options.checkpoint_file.empty()) {
    out << "checkpoint: " << options.checkpoint_file << " (resume with --resume " << options.checkpoint_file << ")\n";
  }
  if (!options.save_dir.empty()) out << "saved " << total << " iterations of outputs as .npy in " << options.save_dir << "\n";
  return 0;
}

}  // namespace conveyor::cli
