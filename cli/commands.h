// The pipeline-running commands of the conveyor CLI: run, bench, preview. Each returns the
// process exit status and throws conveyor::Error (or std::exception) for user errors, which
// main() turns into one line and exit status 1.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace conveyor::cli {

// What every pipeline command takes: the file and its overrides (overrides.h).
struct PipelineCommand {
  std::string path;
  std::string device;        // "" keeps the file's; auto | cpu | gpu
  int batch_size = 0;        // 0 keeps the file's
  std::vector<std::string> sets;
  std::vector<std::string> feeds;  // NODE=SHAPE per external_source node (feed.h)
  std::string extra_output;        // a node output added to the pipeline's outputs (preview --inputs)
  std::string resume;              // a checkpoint file to start from (run --resume; docs/distributed.md)
};

enum class ProgressMode { kAuto, kNone };

struct RunOptions {
  int64_t iterations = 0;  // 0 and epochs 0: one epoch of the first reader, else 100
  int64_t epochs = 0;
  std::string save_dir;    // "" writes nothing
  ProgressMode progress = ProgressMode::kAuto;
  double progress_interval_s = 2.0;  // plain lines when stdout is not a terminal
  std::string checkpoint_file;       // "" writes none; else after the run (and every checkpoint_every)
  int64_t checkpoint_every = 0;      // iterations between checkpoints (0: only at the end)
};

struct BenchOptions {
  int64_t iterations = 50;
  int64_t warmup = 5;
  int repeats = 3;
  bool json = false;
};

struct PreviewOptions {
  std::string png_path;
  std::string output;  // "" picks the first image-like output
  std::string inputs;  // "": outputs only; else this node output's images beside them
  int samples = 16;
  int tile_size = 0;   // 0: tiles at their size; else shrunk to fit N x N
  std::string boxes;   // "": an output named boxes/bboxes, if any (preview_overlays.h)
  std::string mask;    // "": an output named mask/masks, if any
};

int RunCommand(const PipelineCommand& cmd, const RunOptions& options, std::ostream& out);
int BenchCommand(const PipelineCommand& cmd, const BenchOptions& options, std::ostream& out);
int PreviewCommand(const PipelineCommand& cmd, const PreviewOptions& options, std::ostream& out);

}  // namespace conveyor::cli
