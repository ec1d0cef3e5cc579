// conveyor: the command-line tool (docs/cli.md).
//
//   conveyor validate PIPELINE.yaml...        conveyor ops [--plugin LIB.so] [--markdown] [NAME]
//   conveyor run PIPELINE.yaml [...]          conveyor bench PIPELINE.yaml [...]
//   conveyor preview PIPELINE.yaml -o grid.png [...]
//   conveyor index tfrecord|webdataset FILE... [-o DIR]
//   conveyor shards --format webdataset|tfrecord --file-root DIR --output DIR [...]   (or --index SHARD...)
//
// Exit status: 0 success, 1 a user error (bad YAML, missing file, failing pipeline: one line on
// stderr), 2 bad command-line arguments (the usage text on stderr). Conveyor's exceptions become
// those lines here, in one place; nothing escapes main.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/catalogue.h"
#include "cli/commands.h"
#include "cli/index_command.h"
#include "cli/shards_command.h"
#include "cli/validate.h"
#include "core/error.h"
#include "core/op/plugin.h"
#include "core/op/registry.h"
#include "core/util/strings.h"
#include "operators/decoders/decoder_env.h"

namespace conveyor::cli {
namespace {

// The catalogue lists the on-demand plugins' operators too (readers.video, decoders.video): each
// such plugin is loaded first; one that cannot load is said on stderr with the reason, and its
// operators are left out.
void LoadOnDemandPlugins() {
  for (const OnDemandPlugin& plugin : OnDemandPlugins()) {
    if (plugin.operators.empty()) continue;
    try {
      FindOrLoadOperator(plugin.operators.front());
    } catch (const Error& e) {
      std::cerr << "conveyor ops: the operators of " << plugin.file << " (" << Join(plugin.operators, ", ")
                << ") are not listed: " << e.what() << "\n";
    }
  }
}

int RunOps(const std::vector<std::string>& plugins, bool markdown, const std::string& name) {
  for (const std::string& plugin : plugins) LoadPlugin(plugin);
  LoadOnDemandPlugins();
  const OpRegistry& registry = OpRegistry::Global();
  if (!name.empty()) {
    const OpRegistry::Entry& entry = registry.Get(name);  // unknown: ConfigError with a suggestion
    std::cout << (markdown ? CatalogueMarkdown(registry, {name}) : CataloguePage(entry));
  } else {
    std::cout << (markdown ? CatalogueMarkdown(registry) : CatalogueList(registry));
  }
  return 0;
}

// A bound with a readable message ("--repeats: expected an integer >= 1, got \"0\"") where CLI11's
// PositiveNumber prints a range up to DBL_MAX.
CLI::Validator AtLeast(int64_t min, bool integer = true) {
  const std::string what = std::string(integer ? "an integer" : "a number") + " >= " + std::to_string(min);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end != nullptr && *end == '\0';
        const bool whole = !integer || text.find_first_not_of("+-0123456789") == std::string::npos;
        return number && whole && value >= static_cast<double>(min) ? "" : "expected " + what + ", got \"" + text + "\"";
      },
      what);
}

// "conveyor runn ...": CLI11 would only say that a subcommand is required.
bool UnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), argv[1]) != names.end()) return false;
  std::cerr << "conveyor: unknown command \"" << argv[1] << "\"" << DidYouMean(argv[1], names) << "\n"
            << app.help();
  return true;
}

void AddDevice(CLI::App* cmd, std::string* device) {
  cmd->add_option("--device", *device, "Where the pipeline runs (overrides pipeline.device)")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
}

int Main(int argc, char** argv) {
  // The decoder's measuring switches (CONVEYOR_JPEG_*, decoder_env.h) reach every decoder the
  // pipelines make; a bad value fails that pipeline with the variable named.
  ops::SetDecoderOptionsHook(ops::ApplyDecoderEnv);
  CLI::App app("Conveyor: GPU data pipelines declared in YAML.", "conveyor");
  app.require_subcommand(1);
  app.failure_message(CLI::FailureMessage::help);

  std::vector<std::string> files, plugins, sets;
  bool markdown = false, json = false, no_progress = false;
  std::string op_name, save_dir, png_path, output_name, inputs_name, boxes_name, mask_name, checkpoint_file;
  int64_t checkpoint_every = 0;
  int64_t iterations = 0, epochs = 0, warmup = 5;
  int repeats = 3, samples = 16, tile_size = 0;
  double progress_interval = 2.0;

  CLI::App* validate = app.add_subcommand("validate", "Check pipeline files without running them (exit 1 on any error)");
  validate->add_option("files", files, "Pipeline YAML files")->required();
  validate->add_option("--plugin", plugins, "Load an operator plugin first (repeatable)")->allow_extra_args(false);

  CLI::App* ops = app.add_subcommand("ops", "The operator catalogue (or one operator's page)");
  ops->add_option("name", op_name, "Operator name");
  ops->add_option("--plugin", plugins, "Load an operator plugin first (repeatable)")->allow_extra_args(false);
  ops->add_flag("--markdown", markdown, "Write the Markdown page (docs/operators.md)");

  PipelineCommand pc;
  auto add_pipeline = [&](CLI::App* cmd) {
    cmd->add_option("pipeline", pc.path, "Pipeline YAML file")->required();
    AddDevice(cmd, &pc.device);
    cmd->add_option("--batch-size", pc.batch_size, "Override pipeline.batch_size")->check(AtLeast(1));
    cmd->add_option("--set", pc.sets, "Override pipeline.FIELD=VALUE or NODE.ARG=VALUE (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--feed", pc.feeds,
                    "Random batches for an external_source node: NODE=SHAPE, e.g. images=200-480x200-640x3 (repeatable)")
        ->allow_extra_args(false);
  };

  CLI::App* run = app.add_subcommand("run", "Run a pipeline with a progress bar and print a summary");
  add_pipeline(run);
  auto* it_opt = run->add_option("--iterations", iterations, "Iterations to run")->check(AtLeast(1));
  run->add_option("--epochs", epochs, "Epochs of the first reader to run")->check(AtLeast(1))->excludes(it_opt);
  run->add_option("--save-outputs", save_dir, "Write every output batch as .npy files into this folder");
  run->add_flag("--no-progress", no_progress, "No progress display, only the summary");
  run->add_option("--resume", pc.resume, "Start from this checkpoint file (written by --checkpoint)");
  run->add_option("--checkpoint", checkpoint_file, "Write a checkpoint to this file at the end (and every --checkpoint-every)");
  run->add_option("--checkpoint-every", checkpoint_every, "Iterations between checkpoints (with --checkpoint)")
      ->check(AtLeast(1));
  run->add_option("--progress-interval", progress_interval, "Seconds between plain progress lines (not a terminal)")
      ->check(AtLeast(0, /*integer=*/false));

  CLI::App* bench = app.add_subcommand("bench", "Time a pipeline: warm-up, then repeats of timed iterations");
  add_pipeline(bench);
  bench->add_option("--iterations", iterations, "Timed iterations per repeat (default 50)")->check(AtLeast(1));
  bench->add_option("--warmup", warmup, "Warm-up iterations (default 5)")->check(AtLeast(0));
  bench->add_option("--repeats", repeats, "Repeats (default 3)")->check(AtLeast(1));
  bench->add_flag("--json", json, "Write JSON instead of a table");

  CLI::App* preview = app.add_subcommand("preview", "Run one batch and write a PNG grid of an image output");
  add_pipeline(preview);
  preview->add_option("-o,--out", png_path, "PNG file to write")->required();
  preview->add_option("--output", output_name, "The pipeline output to show (default: the first image-like one)");
  preview->add_option("--samples", samples, "Samples to show (default 16)")->check(AtLeast(1));
  preview->add_option("--inputs", inputs_name, "Show this node output's images (e.g. the decoded ones) beside the outputs");
  preview->add_option("--tile-size", tile_size, "Shrink tiles to fit N x N pixels (default: their own size)")
      ->check(AtLeast(1));
  preview->add_option("--boxes", boxes_name,
                      "Outline this output's [N, 4] boxes on the tiles (default: an output named boxes or bboxes)");
  preview->add_option("--mask", mask_name,
                      "Outline this output's label regions on the tiles (default: an output named mask or masks)");

  IndexCommand index(app);
  ShardsCommand shards(app);

  if (UnknownCommand(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*validate) return ValidateFiles(files, plugins, std::cout, std::cerr) == 0 ? 0 : 1;
    if (*ops) return RunOps(plugins, markdown, op_name);
    if (index.chosen()) return index.Run(std::cout);
    if (shards.chosen()) return shards.Run(std::cout);
    if (*run) {
      RunOptions o;
      o.iterations = iterations;
      o.epochs = epochs;
      o.save_dir = save_dir;
      o.progress = no_progress ? ProgressMode::kNone : ProgressMode::kAuto;
      o.progress_interval_s = progress_interval;
      o.checkpoint_file = checkpoint_file;
      o.checkpoint_every = checkpoint_every;
      return RunCommand(pc, o, std::cout);
    }
    if (*bench) {
      BenchOptions o;
      o.iterations = iterations > 0 ? iterations : 50;
      o.warmup = warmup;
      o.repeats = repeats;
      o.json = json;
      return BenchCommand(pc, o, std::cout);
    }
    if (*preview) {
      PreviewOptions o;
      o.png_path = png_path;
      o.output = output_name;
      o.samples = samples;
      o.inputs = inputs_name;
      o.tile_size = tile_size;
      o.boxes = boxes_name;
      o.mask = mask_name;
      return PreviewCommand(pc, o, std::cout);
    }
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "conveyor " << app.get_subcommands().front()->get_name() << ": error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}

}  // namespace
}  // namespace conveyor::cli

int main(int argc, char** argv) { return conveyor::cli::Main(argc, argv); }
