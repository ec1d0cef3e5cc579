// A generated dataset on disk for reader tests: `classes` folders of random files (random sizes and
// bytes, fresh every run), and what each file holds.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace conveyor::testing {

struct FileDataset {
  std::string root;
  std::map<std::string, std::vector<uint8_t>> bytes;  // path -> content
  std::map<std::string, int32_t> labels;              // path -> label (sorted class index)
  std::vector<std::string> sorted_paths;              // the order readers.file lists them in
};

inline std::string FreshTempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir = std::filesystem::path(base ? base : "/tmp") /
                              (name + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline void WriteFile(const std::string& path, const std::vector<uint8_t>& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  ASSERT_TRUE(out.good()) << path;
}

// Class folders "c0".."c{classes-1}" (named so their sorted order is not their creation order:
// "zeta", "alpha", ... would do too) with `per_class` files each, some in a nested folder.
inline FileDataset MakeFileDataset(int classes, int per_class, const std::string& ext = ".jpg") {
  FileDataset d;
  d.root = FreshTempDir("files");
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::string> names = {"zebra", "apple", "mango", "kiwi", "banana", "cherry", "date", "fig"};
  std::vector<std::string> class_names(names.begin(), names.begin() + classes);
  std::vector<std::string> sorted = class_names;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& c : class_names) {
    const int32_t label = static_cast<int32_t>(std::find(sorted.begin(), sorted.end(), c) - sorted.begin());
    for (int i = 0; i < per_class; ++i) {
      const std::string sub = (i % 3 == 2) ? "/nested" : "";
      const std::string path = d.root + "/" + c + sub + "/img" + std::to_string(i) + ext;
      std::vector<uint8_t> data(std::uniform_int_distribution<size_t>(1, 3000)(rng));
      for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
      WriteFile(path, data);
      d.bytes[path] = data;
      d.labels[path] = label;
    }
  }
  // readers.file's order: classes by sorted name, files sorted by path within a class.
  for (const std::string& c : sorted) {
    std::vector<std::string> in_class;
    for (const auto& [path, label] : d.labels) {
      if (path.rfind(d.root + "/" + c + "/", 0) == 0) in_class.push_back(path);
    }
    std::sort(in_class.begin(), in_class.end());
    d.sorted_paths.insert(d.sorted_paths.end(), in_class.begin(), in_class.end());
  }
  return d;
}

}  // namespace conveyor::testing
