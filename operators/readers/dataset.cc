#include "operators/readers/dataset.h"

#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

#include "core/error.h"

namespace conveyor::ops {
namespace fs = std::filesystem;
namespace {

bool Matches(const std::string& name, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  for (const std::string& f : filters) {
    if (fnmatch(f.c_str(), name.c_str(), FNM_CASEFOLD) == 0) return true;
  }
  return false;
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

Dataset ListFileRoot(const std::string& root, const std::vector<std::string>& filters, bool class_folders,
                     const std::string& where) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    throw InvalidArgument(where + ": file_root " + Quote(root) +
                          (fs::exists(root, ec) ? " is not a folder" : " does not exist"));
  }
  std::vector<std::string> classes;
  if (!class_folders) classes.push_back(".");  // one "class": the root itself
  for (fs::directory_iterator it(root, ec), end; class_folders && !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec)) classes.push_back(it->path().filename().string());
  }
  if (ec) throw InvalidArgument(where + ": cannot list file_root " + Quote(root) + ": " + ec.message());
  if (classes.empty()) {
    throw InvalidArgument(where + ": file_root " + Quote(root) +
                          " has no subfolders (expected one folder of files per class)");
  }
  std::sort(classes.begin(), classes.end());
  Dataset d;
  for (size_t label = 0; label < classes.size(); ++label) {
    const fs::path dir = class_folders ? fs::path(root) / classes[label] : fs::path(root);
    std::vector<std::string> files;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && Matches(it->path().filename().string(), filters)) files.push_back(it->path().string());
    }
    if (ec) throw InvalidArgument(where + ": cannot list " + Quote(dir.string()) + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (std::string& f : files) {
      d.paths.push_back(std::move(f));
      d.labels.push_back(static_cast<int32_t>(label));
    }
  }
  if (d.paths.empty()) {
    std::string patterns;
    for (const std::string& f : filters) patterns += (patterns.empty() ? "" : " ") + f;
    throw InvalidArgument(where + ": file_root " + Quote(root) + " has " +
                          (class_folders ? std::to_string(classes.size()) + " class folders but " : "") +
                          "no files matching " + (patterns.empty() ? "anything" : patterns));
  }
  return d;
}

Dataset ParseFileList(const std::string& list_path, const std::string& where) {
  std::ifstream in(list_path);
  if (!in) {
    throw InvalidArgument(where + ": cannot open file_list " + Quote(list_path) + ": " + std::strerror(errno));
  }
  const fs::path base = fs::path(list_path).parent_path();
  Dataset d;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t last = line.find_last_not_of(" \t");
    const size_t gap = line.find_last_of(" \t", last);
    const std::string where_line = where + ": " + list_path + ":" + std::to_string(number);
    if (gap == std::string::npos || gap < first) {
      throw InvalidArgument(where_line + ": expected \"relative/path label\", got " + Quote(line));
    }
    const std::string label_text = line.substr(gap + 1, last - gap);
    const std::string path = line.substr(first, line.find_last_not_of(" \t", gap) - first + 1);
    char* end = nullptr;
    errno = 0;
    const long long label = std::strtoll(label_text.c_str(), &end, 10);
    if (end == label_text.c_str() || *end != '\0' || errno == ERANGE || label < std::numeric_limits<int32_t>::min() ||
        label > std::numeric_limits<int32_t>::max()) {
      throw InvalidArgument(where_line + ": expected an integer label after the path, got " + Quote(label_text));
    }
    d.paths.push_back(fs::path(path).is_absolute() ? path : (base / path).string());
    d.labels.push_back(static_cast<int32_t>(label));
  }
  if (d.paths.empty()) throw InvalidArgument(where + ": file_list " + Quote(list_path) + " lists no files");
  return d;
}

Dataset FromFiles(const std::vector<std::string>& files, const std::vector<int64_t>& labels, const std::string& where) {
  if (files.empty()) throw InvalidArgument(where + ": files is empty");
  if (!labels.empty() && labels.size() != files.size()) {
    throw InvalidArgument(where + ": labels has " + std::to_string(labels.size()) + " values for " +
                          std::to_string(files.size()) + " files (expected one label per file)");
  }
  Dataset d;
  d.paths = files;
  for (size_t i = 0; i < files.size(); ++i) {
    const int64_t label = labels.empty() ? static_cast<int64_t>(i) : labels[i];
    if (label < std::numeric_limits<int32_t>::min() || label > std::numeric_limits<int32_t>::max()) {
      throw InvalidArgument(where + ": label " + std::to_string(label) + " of " + Quote(files[i]) +
                            " does not fit int32");
    }
    d.labels.push_back(static_cast<int32_t>(label));
  }
  return d;
}

}  // namespace conveyor::ops
