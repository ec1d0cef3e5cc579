// Runs the real `conveyor` binary (a data dependency of the test, found through the runfiles
// tree: the test's working directory) and captures its exit status, stdout and stderr.
#pragma once

#include <string>
#include <vector>

#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

namespace conveyor::cli_test {

struct CliResult {
  int status = -1;  // the exit status; -1 when killed by a signal
  std::string out;
  std::string err;
};

CliResult RunConveyor(const std::vector<std::string>& args);
// The same for another program of the runfiles tree (e.g. "tools/soak/conveyor_soak").
CliResult RunProgram(const std::string& program, const std::vector<std::string>& args);

// A fresh folder under $TEST_TMPDIR.
std::string MakeTempDir(const std::string& name);
void WriteText(const std::string& path, const std::string& text);
std::string ReadText(const std::string& path);
// A .npy file of `bytes` with the given dtype and shape (our writer, operators/readers/npy_format.h).
void WriteNpy(const std::string& path, DType dtype, const Shape& shape, const std::vector<uint8_t>& bytes);
// Random bytes from a seeded generator (fresh data per test, reproducible per seed).
std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed);

}  // namespace conveyor::cli_test
