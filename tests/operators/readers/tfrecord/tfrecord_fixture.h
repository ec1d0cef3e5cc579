// TFRecord files for tests, written by an independent encoder (write_tfrecords.py: protobuf's Python
// runtime and a Python CRC32C) from records the test draws fresh each run, so the test knows every
// value the reader must return.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace conveyor::testing {

// A new folder under the test's temporary directory.
inline std::string FreshTempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(base ? base : "/tmp") / (name + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

struct PlanFeature {
  enum Kind { kBytes, kInt64, kFloat, kNoKind } kind = kBytes;
  std::string name;
  std::vector<std::string> bytes;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

struct PlanRecord {
  std::vector<PlanFeature> features;
  bool raw = false;  // data is `raw_data`, not an Example
  std::string raw_data;
  const PlanFeature* Find(const std::string& name) const {
    for (const PlanFeature& f : features) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
};

struct PlanFile {
  std::string path;  // its DALI-style index is written to path + ".idx"
  std::vector<PlanRecord> records;
};

inline std::string Hex(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out.empty() ? "-" : out;
}

// Runs write_tfrecords.py over a plan of `files` (fails the test when it fails).
inline void WriteTfRecords(const std::vector<PlanFile>& files) {
  const std::string plan_path = FreshTempDir("plan") + "/plan.txt";
  {
    std::ofstream plan(plan_path);
    plan.precision(9);  // float32 round-trips through 9 significant digits
    for (const PlanFile& file : files) {
      plan << "file " << file.path << "\n";
      for (const PlanRecord& r : file.records) {
        if (r.raw) {
          plan << "raw " << (r.raw_data.empty() ? "" : Hex(r.raw_data)) << "\n";
          continue;
        }
        plan << "record\n";
        for (const PlanFeature& f : r.features) {
          static const char* kNames[] = {"bytes", "int64", "float", "nokind"};
          plan << kNames[f.kind] << " " << f.name;
          for (const std::string& b : f.bytes) plan << " " << Hex(b);
          for (int64_t v : f.ints) plan << " " << v;
          for (float v : f.floats) plan << " " << v;
          plan << "\n";
        }
      }
    }
  }
  const std::string command = "/usr/bin/python3 tests/operators/readers/tfrecord/write_tfrecords.py " + plan_path;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

inline std::string RandomBytes(std::mt19937& rng, size_t min_size, size_t max_size) {
  std::string s(std::uniform_int_distribution<size_t>(min_size, max_size)(rng), '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A data set of every feature kind the tests read:
//   image/encoded  bytes, one value of 1..max_bytes random bytes
//   label          int64, one value
//   bbox           float, 0..5 values (VarLen)
//   grid           int64, 6 values (a [2, 3] FixedLen)
//   captions       bytes, 0..3 values of 0..12 bytes (VarLen)
//   weight         float, one value, in every third record only (FixedLen with a default)
inline std::vector<PlanFile> MakeTfRecordDataset(const std::string& dir, int files, int records_per_file,
                                                 std::mt19937& rng, size_t max_bytes = 3000) {
  std::vector<PlanFile> out;
  int64_t serial = 0;
  for (int f = 0; f < files; ++f) {
    PlanFile file{dir + "/part-" + std::to_string(f) + ".tfrecord", {}};
    for (int r = 0; r < records_per_file; ++r, ++serial) {
      PlanRecord rec;
      rec.features.push_back({PlanFeature::kBytes, "image/encoded", {RandomBytes(rng, 1, max_bytes)}, {}, {}});
      rec.features.push_back({PlanFeature::kInt64, "label", {}, {serial * 1000 + static_cast<int64_t>(rng() % 1000)}, {}});
      PlanFeature bbox{PlanFeature::kFloat, "bbox", {}, {}, {}};
      for (int k = static_cast<int>(rng() % 6); k > 0; --k) {
        bbox.floats.push_back(std::uniform_real_distribution<float>(-1e3f, 1e3f)(rng));
      }
      rec.features.push_back(bbox);
      PlanFeature grid{PlanFeature::kInt64, "grid", {}, {}, {}};
      for (int k = 0; k < 6; ++k) grid.ints.push_back(static_cast<int64_t>(rng()) - (int64_t{1} << 31));
      rec.features.push_back(grid);
      PlanFeature captions{PlanFeature::kBytes, "captions", {}, {}, {}};
      for (int k = static_cast<int>(rng() % 4); k > 0; --k) captions.bytes.push_back(RandomBytes(rng, 0, 12));
      rec.features.push_back(captions);
      if (r % 3 == 0) {
        rec.features.push_back({PlanFeature::kFloat, "weight", {}, {}, {std::uniform_real_distribution<float>(0, 1)(rng)}});
      }
      file.records.push_back(rec);
    }
    out.push_back(file);
  }
  WriteTfRecords(out);
  return out;
}

// The message of the InvalidArgument `f` throws ("" and a failure when it throws none).
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InvalidArgument";
  return "";
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace conveyor::testing
