#include "tests/cli/cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "operators/readers/npy_format.h"

namespace conveyor::cli_test {
namespace {

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Bazel gives each test its own TEST_TMPDIR; outside Bazel (the GPU bundle, where sanitizer runs
// of one binary go side by side) each process gets a folder of its own under /tmp.
std::string TempRoot() {
  const char* t = std::getenv("TEST_TMPDIR");
  if (t != nullptr) return t;
  static const std::string root = [] {
    const std::string r = "/tmp/conveyor_test." + std::to_string(::getpid());
    std::filesystem::create_directories(r);
    return r;
  }();
  return root;
}

}  // namespace

std::string MakeTempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(TempRoot()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void WriteNpy(const std::string& path, DType dtype, const Shape& shape, const std::vector<uint8_t>& bytes) {
  WriteText(path, ops::MakeNpyHeader(dtype, shape, false) + std::string(bytes.begin(), bytes.end()));
}

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng() & 0xff);
  return v;
}

CliResult RunConveyor(const std::vector<std::string>& args) { return RunProgram("cli/conveyor", args); }

CliResult RunProgram(const std::string& program, const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string base = TempRoot() + "/conveyor_cli_" + std::to_string(++counter);
  std::string command = program;
  for (const std::string& a : args) command += " " + Quote(a);
  command += " >" + Quote(base + ".out") + " 2>" + Quote(base + ".err") + " </dev/null";
  const int raw = std::system(command.c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = ReadText(base + ".out");
  r.err = ReadText(base + ".err");
  return r;
}

}  // namespace conveyor::cli_test
