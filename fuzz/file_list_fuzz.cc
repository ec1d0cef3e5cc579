// libFuzzer target: the readers' file_list parser (ParseFileList) on arbitrary file contents.
// Contract: a list either parses into as many paths as labels, each non-empty, or throws
// conveyor::InvalidArgument; nothing else.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "operators/readers/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/conveyor_fuzz_file_list_" + std::to_string(getpid()) + ".txt";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);
  try {
    const conveyor::ops::Dataset d = conveyor::ops::ParseFileList(path, "fuzz file_list");
    if (d.paths.empty() || d.paths.size() != d.labels.size()) __builtin_trap();
    for (const std::string& p : d.paths) {
      if (p.empty()) __builtin_trap();
    }
  } catch (const conveyor::InvalidArgument&) {
  }
  return 0;
}
