// `conveyor index FORMAT FILE... [-o DIR]`: writes the index files of existing data files, so that
// a reader starts from them instead of scanning every file at construction (docs/readers.md).
//
// | FORMAT   | files      | index written                          | format                        |
// |----------|------------|----------------------------------------|-------------------------------|
// | tfrecord | TFRecord   | <DIR or the file's folder>/<name>.idx  | DALI's tfrecord2idx: "offset  |
// |          |            |                                        | size" per record              |
// | webdataset | tar shards | <DIR or the shard's folder>/<name>.idx | DALI's wds2idx v1.2: a line |
// |          |            |                                        | per sample (wds_index.h)      |
//
// A file may be a URL (read through ByteSource); its index then goes to DIR (required). One line per
// file (records, MB, seconds, MB/s scanned, the index written) and a total. Every record's header
// is checked (length CRC32C, length within the file): a damaged file is an error naming the file,
// record and offset, and no index is written for it. An index appears whole or not at all (written
// to a temporary name, then renamed).
//
// Registration in main.cc is two lines: `IndexCommand index(app);` beside the other subcommands
// and `if (index.chosen()) return index.Run(std::cout);` in the dispatch. A new format adds one
// row to kIndexFormats in index_command.cc.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace conveyor::cli {

// Indexes `files` into `out_dir` ("" = each file's folder); prints one line per file and a total.
// Throws InvalidArgument naming the file for anything it cannot index.
int IndexTfRecordFiles(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out);
// The same for WebDataset tar shards: headers scanned with libarchive (tar_scan.h), members grouped
// into samples; a compressed or damaged tar is an error naming it.
int IndexWebDatasetShards(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out);

class IndexCommand {
 public:
  // Adds `index` and one subcommand per format to `app`.
  explicit IndexCommand(CLI::App& app);
  IndexCommand(const IndexCommand&) = delete;  // CLI11 holds pointers into it
  IndexCommand& operator=(const IndexCommand&) = delete;

  bool chosen() const { return index_->parsed(); }
  // Runs the chosen format's indexer; its exit status.
  int Run(std::ostream& out) const;

 private:
  CLI::App* index_ = nullptr;
  std::vector<CLI::App*> formats_;  // one per kIndexFormats row, in order
  std::vector<std::string> files_;
  std::string out_dir_;
};

}  // namespace conveyor::cli
