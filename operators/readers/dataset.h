// The list of samples a reader serves: file paths and labels, from one of three sources.
//
// | argument     | what it lists                                                           | labels |
// |--------------|-------------------------------------------------------------------------|--------|
// | file_root    | every file under each subfolder of the root (recursively), sorted by    | index of the sorted |
// |              | path within its class; files directly in the root are not samples       | subfolder name      |
// |              | (readers.numpy: every file under the root, sorted, no class folders)    | 0                   |
// | file_list    | a text file, one `relative/path label` per line (path relative to the   | the int on the line |
// |              | list's folder; may contain spaces — the label is the last field); blank |                     |
// |              | lines and lines starting with `#` are skipped                           |                     |
// | files        | the given paths (resolved against the YAML file's folder)               | `labels`, or 0..N-1 |
//
// `filters` are fnmatch patterns matched case-insensitively against file names (file_root only).
// Errors are InvalidArgument naming the reader (`where`), the path and, for a list, the line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace conveyor::ops {

struct Dataset {
  std::vector<std::string> paths;
  std::vector<int32_t> labels;  // one per path
};

// With `class_folders` (readers.file) the root's subfolders are the classes; without
// (readers.numpy) every matching file under the root is a sample, labelled 0.
Dataset ListFileRoot(const std::string& root, const std::vector<std::string>& filters, bool class_folders,
                     const std::string& where);
Dataset ParseFileList(const std::string& list_path, const std::string& where);
Dataset FromFiles(const std::vector<std::string>& files, const std::vector<int64_t>& labels, const std::string& where);

}  // namespace conveyor::ops
