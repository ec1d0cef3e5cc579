// WebDataset shards for reader tests, written at test time by a real tar encoder (Python's
// tarfile, make_tar.py) from fresh random member contents, and what each holds.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <stdlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace conveyor::testing {

// A new folder under the test's temporary directory (mkdtemp: unique across runs and tests).
inline std::string FreshTempDir(const std::string& name) {
  std::string base = ::testing::TempDir();
  if (!base.empty() && base.back() == '/') base.pop_back();
  std::string pattern = base + "/" + name + "_XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern;
  return pattern;
}

inline void WriteFile(const std::string& path, const std::vector<uint8_t>& data) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()),
                                              static_cast<std::streamsize>(data.size()));
}

struct TarMemberSpec {
  std::string name;            // as stored ("k/0001.jpg")
  std::vector<uint8_t> bytes;  // contents
  bool directory = false;
};

struct WdsSample {
  std::string key;
  std::map<std::string, std::vector<uint8_t>> members;  // ext -> bytes
};

struct WdsShard {
  std::string path;
  std::vector<WdsSample> samples;
};

inline std::vector<uint8_t> RandomBytes(std::mt19937& rng, size_t size) {
  std::vector<uint8_t> b(size);
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// Writes `members` in order into `path` (format ustar | gnu | pax; ".tar.gz" compresses), and
// with `python_index` that shard's wds2idx index as Python's tarfile sees it (make_tar.py).
inline void WriteTar(const std::string& path, const std::vector<TarMemberSpec>& members,
                     const std::string& format = "pax", const std::string& python_index = "") {
  const std::string dir = FreshTempDir("members");
  const std::string manifest = dir + "/manifest.txt";
  std::ofstream list(manifest);
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].directory) {
      list << members[i].name << "\tDIR\n";
      continue;
    }
    const std::string file = dir + "/m" + std::to_string(i);
    WriteFile(file, members[i].bytes);
    list << members[i].name << "\t" << file << "\n";
  }
  list.close();
  const std::string cmd = "python3 tests/operators/readers/webdataset/make_tar.py '" + path + "' " + format + " '" +
                          manifest + "'" + (python_index.empty() ? "" : " '" + python_index + "'");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::filesystem::remove_all(dir);
}

// `count` samples keyed "<prefix>_<i>", each with a member per ext of random size in [1, max_size]
// (sizes of `multiple_of` bytes for exts in `whole`), written as one shard.
inline WdsShard MakeWdsShard(const std::string& path, int count, const std::vector<std::string>& exts,
                             std::mt19937& rng, const std::string& prefix, size_t max_size = 3000,
                             const std::string& format = "pax") {
  WdsShard shard{path, {}};
  std::vector<TarMemberSpec> members;
  for (int i = 0; i < count; ++i) {
    char key[64];
    std::snprintf(key, sizeof(key), "%s_%05d", prefix.c_str(), i);
    WdsSample sample{key, {}};
    for (const std::string& ext : exts) {
      const size_t size = std::uniform_int_distribution<size_t>(1, max_size)(rng) * (ext == "f32" ? 4 : 1);
      sample.members[ext] = RandomBytes(rng, size);
      members.push_back({sample.key + "." + ext, sample.members[ext], false});
    }
    shard.samples.push_back(std::move(sample));
  }
  WriteTar(path, members, format);
  return shard;
}

}  // namespace conveyor::testing
