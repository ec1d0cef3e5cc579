// `conveyor shards`: writes a data set of files as shards — WebDataset tar shards or TFRecord
// files, each with its index — or, with --index, the indexes of existing shards (docs/cli.md).
//
//   conveyor shards --format webdataset|tfrecord (--file-root DIR | --file-list FILE) --output DIR
//                   [--prefix NAME] [--shard-size 256M] [--shuffle [--seed N]] [--no-progress]
//   conveyor shards --index SHARD... [--format F] [--output DIR]
//
// | format     | shard                     | a sample                                  | index              |
// |------------|---------------------------|-------------------------------------------|--------------------|
// | webdataset | PREFIX-NNNNNN.tar (ustar, | `<key>.<ext>`: the file, ext its own      | .tar.idx: wds2idx  |
// |            | libarchive)               | lowercased; `<key>.cls`: the label as     | v1.2               |
// |            |                           | decimal text; key = zero-padded number    |                    |
// | tfrecord   | PREFIX-NNNNNN.tfrecord    | a tf.train.Example: image/encoded (bytes),| .tfrecord.idx:     |
// |            |                           | image/class/label (int64[1])              | tfrecord2idx       |
//
// The input lists samples as readers.file does (dataset.h): --file-root takes one subfolder per
// class and the files the decoders take (image_formats.h); --file-list takes `path label` lines.
// Samples are written in that order, or a permutation of it (--shuffle, --seed). A shard is closed
// when the next sample would take it past --shard-size, so every shard stays within the target
// unless one sample alone exceeds it. Shards and indexes appear under their names only when whole
// (the writers write temporary names and rename); an output folder already holding PREFIX-*
// shards of the format is refused. Every error names the file it is about.
//
// Registration in main.cc: `ShardsCommand shards(app);` and `if (shards.chosen()) return
// shards.Run(std::cout);`.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace conveyor::cli {

struct ShardsOptions {
  std::string format;  // "webdataset" or "tfrecord"
  std::string file_root;
  std::string file_list;
  std::string output;
  std::string prefix = "shard";
  int64_t shard_size = int64_t{256} << 20;
  bool shuffle = false;
  uint64_t seed = 0;
  bool progress = true;  // a bar redrawn in place, when stdout is a terminal
};

// "256M" → 268435456: a number (decimals allowed) with an optional K, M, G or T (powers of 1024,
// case-insensitive, an optional trailing B or iB). Throws InvalidArgument naming --shard-size.
int64_t ParseByteSize(const std::string& text);

// Writes the shards; one line per shard and a summary to `out`. Throws InvalidArgument naming the
// file or option at fault.
int WriteShards(const ShardsOptions& options, std::ostream& out);

class ShardsCommand {
 public:
  explicit ShardsCommand(CLI::App& app);
  ShardsCommand(const ShardsCommand&) = delete;  // CLI11 holds pointers into it
  ShardsCommand& operator=(const ShardsCommand&) = delete;

  bool chosen() const { return command_->parsed(); }
  int Run(std::ostream& out) const;

 private:
  CLI::App* command_ = nullptr;
  ShardsOptions options_;
  std::string shard_size_ = "256M";
  bool index_ = false;
  bool no_progress_ = false;
  std::vector<std::string> files_;  // --index's shards
};

}  // namespace conveyor::cli
