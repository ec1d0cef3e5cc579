// readers.webdataset over HTTP (the fetch layer, against the loopback test server): shards given as
// URLs with brace ranges, scanned remotely or indexed by index files that are URLs too, deliver the
// same samples in the same order as the local shards in both shuffle modes, with sources naming
// the URL; a missing shard is an error naming it. The http_* arguments reach every request the
// reader makes: the scan, index files and the shards it opens for batches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "core/op/harness.h"
#include "core/pipeline/pipeline.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/shards/shard_reader_op.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"
#include "tests/operators/readers/io/test_http_server.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

std::vector<uint8_t> Bytes(const TensorListCPU& t, int i) {
  const auto* p = static_cast<const uint8_t*>(t.raw_sample(i));
  return {p, p + t.shape(i).num_elements()};
}

OpSpec Reader(const Strings& paths, const Strings& index_paths, const std::string& mode) {
  OpSpec spec("readers.webdataset", "r");
  spec.SetArg("paths", paths).SetArg("ext", Strings{"jpg", "cls"}).AddOutput("jpg").AddOutput("cls");
  if (!index_paths.empty()) spec.SetArg("index_paths", index_paths);
  spec.SetArg("random_shuffle", true).SetArg("shuffle", mode).SetArg("initial_fill", int64_t{8});
  return spec;
}

TEST(WebDatasetHttp, UrlShardsGiveTheLocalSamplesInBothModes) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("wds_http");
  for (int s = 0; s < 3; ++s) {
    const std::string path = dir + "/shard-" + std::to_string(s) + ".tar";
    testing::MakeWdsShard(path, 9 + 4 * s, {"jpg", "cls"}, rng, "s" + std::to_string(s), 20000);
    std::ofstream(path + ".idx") << ops::FormatWdsIndex(ops::GroupMembers(ops::ScanTar(*ops::OpenByteSource(path))), path);
  }
  const auto server = ops::testing::TestHttpServer::Start(dir);
  const std::string url = server->Url("shard-{0..2}.tar");
  for (const std::string mode : {"samples", "shards"}) {
    for (bool indexed : {false, true}) {
      OpHarness local(Reader({dir + "/shard-{0..2}.tar"}, {}, mode), Device::kCpu, 5);
      OpHarness remote(Reader({url}, indexed ? Strings{url + ".idx"} : Strings{}, mode), Device::kCpu, 5);
      for (int it = 0; it < 9; ++it) {  // 39 samples: more than an epoch
        local.Run();
        remote.Run();
        for (int i = 0; i < 5; ++i) {
          ASSERT_EQ(Bytes(remote.OutputCpu(0), i), Bytes(local.OutputCpu(0), i)) << mode << " " << indexed << " " << it;
          ASSERT_EQ(Bytes(remote.OutputCpu(1), i), Bytes(local.OutputCpu(1), i));
          EXPECT_THAT(remote.OutputCpu(0).source(i)->file, HasSubstr(server->Url("shard-")));
        }
      }
    }
  }
  try {
    OpHarness h(Reader({server->Url("gone.tar")}, {}, "samples"), Device::kCpu, 5);
    ADD_FAILURE() << "a missing shard";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("(r): shard \"" + server->Url("gone.tar") + "\""));
  }
}

// One served shard (and its index beside it), the server counting requests.
class FetchArgsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::mt19937 rng(std::random_device{}());
    dir_ = new std::string(testing::FreshTempDir("wds_fetch_args"));
    const std::string path = *dir_ + "/s.tar";
    testing::MakeWdsShard(path, 40, {"jpg", "cls"}, rng, "k", 20000);
    std::ofstream(path + ".idx") << ops::FormatWdsIndex(ops::GroupMembers(ops::ScanTar(*ops::OpenByteSource(path))), path);
    server_ = ops::testing::TestHttpServer::Start(*dir_).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  void SetUp() override { server_->Reset(); }

  // A reader of `paths` whose requests fail fast: `retries` retries 1 ms apart.
  static OpSpec Fetching(const Strings& paths, const Strings& index_paths, int64_t retries) {
    OpSpec spec = Reader(paths, index_paths, "samples");
    spec.SetArg("http_max_retries", retries).SetArg("http_retry_backoff_ms", int64_t{1});
    return spec;
  }
  static std::string Error(const OpSpec& spec) {
    try {
      OpHarness h(spec, Device::kCpu, 4);
      h.Run();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }

  static inline std::string* dir_ = nullptr;
  static inline ops::testing::TestHttpServer* server_ = nullptr;
};

TEST_F(FetchArgsTest, ArgumentsBecomeTheFetchOptions) {
  OpSpec spec = Reader({"s.tar"}, {}, "samples");
  spec.SetArg("http_max_retries", int64_t{7}).SetArg("http_retry_backoff_ms", int64_t{11});
  spec.SetArg("http_connect_timeout_ms", int64_t{1234}).SetArg("http_timeout_ms", int64_t{5678});
  spec.SetArg("http_read_ahead_bytes", int64_t{1} << 20).SetArg("http_memory_limit_bytes", int64_t{3} << 20);
  spec.SetArg("http_max_connections", int64_t{3}).SetArg("http_ca_file", std::string("/etc/ca.pem"));
  const ops::FetchOptions o = ops::ShardFetchOptions(spec);
  EXPECT_EQ(o.max_retries, 7);
  EXPECT_EQ(o.retry_base_ms, 11);
  EXPECT_EQ(o.connect_timeout_ms, 1234);
  EXPECT_EQ(o.request_timeout_ms, 5678);
  EXPECT_EQ(o.read_ahead_bytes, 1 << 20);
  EXPECT_EQ(o.memory_limit_bytes, 3 << 20);
  EXPECT_EQ(o.max_connections, 3);
  EXPECT_EQ(o.ca_file, "/etc/ca.pem");
  const ops::FetchOptions defaults = ops::ShardFetchOptions(Reader({"s.tar"}, {}, "samples"));
  const ops::FetchOptions fetch_defaults;
  EXPECT_EQ(defaults.max_retries, fetch_defaults.max_retries);
  EXPECT_EQ(defaults.read_ahead_bytes, fetch_defaults.read_ahead_bytes);
  EXPECT_EQ(defaults.memory_limit_bytes, fetch_defaults.memory_limit_bytes);
  EXPECT_EQ(defaults.request_timeout_ms, fetch_defaults.request_timeout_ms);
}

TEST_F(FetchArgsTest, OutOfRangeValuesAreRejectedByName) {
  const auto rejected = [](const std::string& arg, int64_t value) {
    OpSpec spec = Reader({*dir_ + "/s.tar"}, {}, "samples");
    spec.SetArg(arg, value);
    return Error(spec);
  };
  EXPECT_THAT(rejected("http_max_retries", -1),
              HasSubstr("argument \"http_max_retries\": expected a value in [0, 100], got -1"));
  EXPECT_THAT(rejected("http_max_connections", 0),
              HasSubstr("argument \"http_max_connections\": expected a value in [1, 256], got 0"));
  EXPECT_THAT(rejected("http_timeout_ms", 0),
              HasSubstr("argument \"http_timeout_ms\": expected a value in [1, 86400000], got 0"));
  EXPECT_THAT(rejected("http_memory_limit_bytes", -1),
              HasSubstr("argument \"http_memory_limit_bytes\": expected a value in [0, 1000000000000], got -1"));
}

// The scan (no index), an index file given by URL, and a shard opened for a batch (index local):
// each stops after 1 + http_max_retries attempts, saying so.
TEST_F(FetchArgsTest, RetriesApplyToScansIndexFilesAndShards) {
  const std::string failing = server_->Url("f/fail=503:all/s.tar");
  const std::string good = server_->Url("s.tar");
  for (const int64_t retries : {0, 2}) {
    const std::string attempts = retries == 0 ? "HTTP 503 after 1 attempt" : "HTTP 503 after 3 attempts";
    server_->Reset();
    EXPECT_THAT(Error(Fetching({failing}, {}, retries)),
                HasSubstr("(r): shard \"" + failing + "\": cannot open: " + attempts));
    EXPECT_EQ(server_->counts().requests, retries + 1) << server_->Log();
    server_->Reset();
    EXPECT_THAT(Error(Fetching({good}, {failing + ".idx"}, retries)),
                HasSubstr("(r): index \"" + failing + ".idx\": cannot open: " + attempts));
    EXPECT_EQ(server_->counts().requests, retries + 1) << server_->Log();
    server_->Reset();
    EXPECT_THAT(Error(Fetching({failing}, {*dir_ + "/s.tar.idx"}, retries)),
                HasSubstr("(r): shard \"" + failing + "\": cannot open: " + attempts));
    EXPECT_EQ(server_->counts().requests, retries + 1) << server_->Log();
  }
}

TEST_F(FetchArgsTest, RequestTimeoutEndsAStalledScan) {
  OpSpec spec = Fetching({server_->Url("f/delay=1/s.tar")}, {}, 0);
  spec.SetArg("http_timeout_ms", int64_t{300});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(Error(spec), AllOf(HasSubstr("cannot open: "), HasSubstr(" after 1 attempt")));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0)
      << "the server waits 30 s: the 300 ms request timeout must end it";
}

// A scan reads the headers of 80 members in order: with read-ahead they come in a few blocks;
// without it (or without memory for blocks) each of libarchive's reads is a request of its own.
TEST_F(FetchArgsTest, ReadAheadAndMemoryLimitShapeTheScansRequests) {
  const auto scan_requests = [](const std::string& arg, int64_t value) {
    server_->Reset();
    OpSpec spec = Fetching({server_->Url("s.tar")}, {}, 0);
    if (!arg.empty()) spec.SetArg(arg, value);
    OpHarness h(spec, Device::kCpu, 4);
    return server_->counts().requests;
  };
  const int64_t read_ahead = scan_requests("", 0);
  EXPECT_LT(read_ahead, 10);
  EXPECT_GT(scan_requests("http_read_ahead_bytes", 0), 3 * read_ahead + 20);
  EXPECT_GT(scan_requests("http_memory_limit_bytes", 16384), 3 * read_ahead + 20);
}

// An https shard verifies with the CA file the YAML names (relative to the YAML's folder).
TEST_F(FetchArgsTest, CaFileFromTheYamlVerifiesHttps) {
  const std::string tls = testing::FreshTempDir("wds_fetch_tls");
  const std::string make = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                           "-addext subjectAltName=IP:127.0.0.1 -keyout " + tls + "/key.pem -out " + tls +
                           "/cert.pem >/dev/null 2>&1";
  if (std::system(make.c_str()) != 0) GTEST_SKIP() << "no openssl CLI to make a self-signed certificate";
  const auto https = ops::testing::TestHttpServer::Start(*dir_, tls + "/cert.pem", tls + "/key.pem");
  const auto yaml = [&](const std::string& ca) {
    return "pipeline: {name: wds, batch_size: 4, device: cpu, num_threads: 2, seed: 3}\n"
           "ops:\n"
           "  - op: readers.webdataset\n    name: r\n"
           "    args: {paths: [\"" + https->Url("s.tar") + "\"], ext: [jpg], http_max_retries: 0" +
           (ca.empty() ? "" : ", http_ca_file: " + ca) + "}\n"
           "    outputs: [jpegs]\n"
           "outputs: [jpegs]\n";
  };
  Pipeline verified = Pipeline::FromYaml(yaml("cert.pem"), tls);
  verified.Build();
  EXPECT_EQ(verified.EpochSize("r"), 40);
  EXPECT_EQ(verified.Outputs().Cpu(0).num_samples(), 4);
  try {
    Pipeline::FromYaml(yaml(""), tls).Build();
    ADD_FAILURE() << "a self-signed certificate verified without its CA";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("cannot open: curl error 60 ("), HasSubstr(") after 1 attempt")));
  }
}

}  // namespace
}  // namespace conveyor
