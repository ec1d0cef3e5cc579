#include "tests/operators/readers/io/test_http_server.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>

extern char** environ;

namespace conveyor::ops::testing {
namespace {

constexpr int kStartTimeoutMs = 30000;  // python's start under a loaded sanitizer CI

std::string ServerScript() {
  const std::string relative = "tests/operators/readers/io/http_test_server.py";
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (const char* dir = std::getenv(var)) {
      const std::string path = std::string(dir) + "/conveyor/" + relative;
      if (access(path.c_str(), R_OK) == 0) return path;
    }
  }
  if (access(relative.c_str(), R_OK) == 0) return relative;
  throw std::runtime_error("cannot find " + relative + " in the runfiles (RUNFILES_DIR, TEST_SRCDIR) or here");
}

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

}  // namespace

std::unique_ptr<TestHttpServer> TestHttpServer::Start(const std::string& root, const std::string& cert,
                                                      const std::string& key) {
  std::unique_ptr<TestHttpServer> server(new TestHttpServer());
  if (!cert.empty()) server->scheme_ = "https";
  // /usr/bin/python3 first, as tools/test.sh: a pyenv shim on PATH may want a HOME the sandbox lacks.
  const std::string python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  std::vector<std::string> args = {python, ServerScript(), "--root", root, "--exit-on-stdin-eof"};
  if (!cert.empty()) args.insert(args.end(), {"--cert", cert, "--key", key});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  int in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(in_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  const int spawned = posix_spawnp(&server->pid_, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(in_pipe[0]);
  server->stdin_fd_ = in_pipe[1];
  if (spawned != 0) {
    close(out_pipe[0]);
    server->pid_ = -1;
    throw std::runtime_error("cannot start " + python + ": " + std::strerror(spawned));
  }
  // The first line is "PORT <n>".
  std::string line;
  pollfd fd{out_pipe[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos) {
    if (poll(&fd, 1, kStartTimeoutMs) <= 0) break;
    char buffer[256];
    const ssize_t n = read(out_pipe[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    line.append(buffer, static_cast<size_t>(n));
  }
  close(out_pipe[0]);
  if (line.rfind("PORT ", 0) != 0) throw std::runtime_error("the test server did not report its port: \"" + line + "\"");
  server->port_ = std::atoi(line.c_str() + 5);
  return server;
}

TestHttpServer::~TestHttpServer() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

std::string TestHttpServer::Url(const std::string& path) const {
  return scheme_ + "://127.0.0.1:" + std::to_string(port_) + "/" + path;
}

std::string TestHttpServer::Control(const std::string& path) const {
  curl_global_init(CURL_GLOBAL_DEFAULT);  // the fetch layer's own init may not have run yet
  CURL* handle = curl_easy_init();
  std::string body;
  const std::string url = Url(path);
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L);  // the test's own self-signed server
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &body);
  const CURLcode code = curl_easy_perform(handle);
  curl_easy_cleanup(handle);
  if (code != CURLE_OK) throw std::runtime_error(url + ": " + curl_easy_strerror(code));
  return body;
}

void TestHttpServer::Reset() { Control("_reset"); }

TestHttpServer::Counts TestHttpServer::counts() const {
  const std::string text = Control("_stats");
  Counts counts;
  if (std::sscanf(text.c_str(), "requests=%ld bytes=%ld", &counts.requests, &counts.bytes) != 2) {
    throw std::runtime_error("unexpected /_stats answer: " + text);
  }
  return counts;
}

std::string TestHttpServer::Log() const { return Control("_log"); }

TempDir::TempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  path_ = std::string(base != nullptr ? base : "/tmp") + "/io_" + std::to_string(std::random_device{}());
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<uint8_t> RandomBytes(size_t size) {
  const uint64_t seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  std::cout << "RandomBytes(" << size << "): seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> bytes(size);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    const uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, 8);
  }
  for (; i < size; ++i) bytes[i] = static_cast<uint8_t>(rng());
  return bytes;
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out.good()) throw std::runtime_error("cannot write " + path);
}

int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  close(fd);  // never listened on: connecting is refused
  return ntohs(address.sin_port);
}

}  // namespace conveyor::ops::testing
