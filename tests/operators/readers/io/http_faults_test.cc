// The retry rule and every failure of the fetch layer against a loopback server that injects
// faults (http_test_server.py): each case checks what was retried, what was asked again, the error
// text, and that it ends within seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/operators/readers/io/http_fixture.h"

namespace conveyor::ops::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<uint8_t> ReadAll(const ByteSource& source, int64_t offset, int64_t bytes) {
  std::vector<uint8_t> out(static_cast<size_t>(bytes), 0xA5);
  source.ReadAt(offset, out.data(), bytes);
  return out;
}

std::vector<uint8_t> Slice(const std::vector<uint8_t>& bytes, int64_t offset, int64_t size) {
  return {bytes.begin() + offset, bytes.begin() + offset + size};
}

class HttpFaultsTest : public HttpTest {
 protected:
  void SetUp() override {
    HttpTest::SetUp();
    if (file_.empty()) file_ = AddFile("faults.bin", 200000);
  }
  static inline std::vector<uint8_t> file_;
};

TEST_F(HttpFaultsTest, ServerErrorsAndTooManyRequestsAreRetried) {
  for (const char* fault : {"fail=503:2", "fail=500:1", "fail=429:2"}) {
    server_->Reset();
    // skip=1: the open's probe passes, the faults hit the read.
    const std::unique_ptr<HttpSource> source = Open("f/skip=1," + std::string(fault) + "/faults.bin");
    EXPECT_EQ(ReadAll(*source, 1024, 4096), Slice(file_, 1024, 4096)) << fault;
    const int64_t failures = std::string(fault).back() - '0';
    EXPECT_EQ(source->stats().failed_attempts, failures) << fault;
    EXPECT_EQ(server_->counts().requests, 1 + failures + 1) << fault;
  }
}

TEST_F(HttpFaultsTest, PersistentServerErrorFailsAfterTheRetriesWithBackoff) {
  FetchOptions options = Fast();
  options.max_retries = 3;
  options.retry_base_ms = 20;  // waits 20 + 40 + 80 ms
  const std::unique_ptr<HttpSource> source = Open("f/skip=1,fail=503:all/faults.bin", options);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ErrorOf([&] { ReadAll(*source, 1024, 4096); }),
            "\"" + server_->Url("f/skip=1,fail=503:all/faults.bin") +
                "\": expected 4096 bytes at offset 1024: HTTP 503 after 4 attempts");
  EXPECT_GE(SecondsSince(start), 0.140);
  EXPECT_LT(SecondsSince(start), 10.0);
  EXPECT_EQ(server_->counts().requests, 1 + 4);
}

TEST_F(HttpFaultsTest, ServerErrorAtOpenIsRetriedThenReported) {
  const std::unique_ptr<HttpSource> source = Open("f/fail=503:2/faults.bin");
  EXPECT_EQ(source->Size(), 200000);
  EXPECT_EQ(source->stats().failed_attempts, 2);
  EXPECT_EQ(ErrorOf([&] { Open("f/fail=500:all/faults.bin"); }),
            "\"" + server_->Url("f/fail=500:all/faults.bin") + "\": cannot open: HTTP 500 after 3 attempts");
}

TEST_F(HttpFaultsTest, ClientErrorsFailAtOnce) {
  EXPECT_EQ(ErrorOf([&] { Open("missing.bin"); }),
            "\"" + server_->Url("missing.bin") + "\": cannot open: HTTP 404 after 1 attempt");
  EXPECT_EQ(server_->counts().requests, 1);
  const std::unique_ptr<HttpSource> source = Open("f/skip=1,fail=403:all/faults.bin");
  EXPECT_THAT(ErrorOf([&] { ReadAll(*source, 0, 100); }),
              HasSubstr("faults.bin\": expected 100 bytes at offset 0: HTTP 403 after 1 attempt"));
  EXPECT_EQ(server_->counts().requests, 1 + 2);
}

TEST_F(HttpFaultsTest, ConnectionDroppedMidBodyIsResumedAtTheRemainder) {
  const std::unique_ptr<HttpSource> source = Open("f/skip=1,drop=1/faults.bin");
  EXPECT_EQ(ReadAll(*source, 5000, 100000), Slice(file_, 5000, 100000));
  EXPECT_EQ(source->stats().failed_attempts, 1);
  // The server sent half (50000 bytes) before closing: only the rest is asked again.
  EXPECT_THAT(server_->Log(), HasSubstr("range=bytes=55000-104999 status=206 sent=50000"));
}

TEST_F(HttpFaultsTest, ConnectionDroppedEveryTimeReportsWhatArrived) {
  const std::unique_ptr<HttpSource> source = Open("f/skip=1,drop=99/faults.bin");
  // Each attempt gets half of what is left: 50000 + 25000 + 12500 of 100000.
  EXPECT_THAT(ErrorOf([&] { ReadAll(*source, 0, 100000); }),
              AllOf(HasSubstr("\": expected 100000 bytes at offset 0: curl error 18 ("),
                    HasSubstr(") after 3 attempts (87500 of 100000 bytes arrived)")));
}

TEST_F(HttpFaultsTest, SlowResponseTimesOutAndIsRetried) {
  FetchOptions options = Fast();
  options.request_timeout_ms = 1000;  // the server waits 30 s before answering
  const std::unique_ptr<HttpSource> source = Open("f/skip=1,delay=1/faults.bin", options);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ReadAll(*source, 0, 4096), Slice(file_, 0, 4096));
  EXPECT_GE(SecondsSince(start), 0.9);
  EXPECT_LT(SecondsSince(start), 10.0);
  EXPECT_EQ(source->stats().failed_attempts, 1);
}

TEST_F(HttpFaultsTest, ResponseThatNeverComesFailsWithTheTimeout) {
  FetchOptions options = Fast();
  options.request_timeout_ms = 1000;
  options.max_retries = 1;
  const std::unique_ptr<HttpSource> source = Open("f/skip=1,delay=99/faults.bin", options);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(ErrorOf([&] { ReadAll(*source, 0, 4096); }),
              AllOf(HasSubstr("faults.bin\": expected 4096 bytes at offset 0: curl error 28 (Timeout was reached"),
                    HasSubstr(") after 2 attempts")));
  EXPECT_LT(SecondsSince(start), 10.0);
}

TEST_F(HttpFaultsTest, BodyThatStallsTimesOutAndTheRemainderIsAsked) {
  FetchOptions options = Fast();
  options.request_timeout_ms = 1000;
  const std::unique_ptr<HttpSource> source = Open("f/skip=1,stall=1/faults.bin", options);
  EXPECT_EQ(ReadAll(*source, 0, 100000), Slice(file_, 0, 100000));
  EXPECT_THAT(server_->Log(), HasSubstr("range=bytes=50000-99999 status=206 sent=50000"));
}

TEST_F(HttpFaultsTest, RefusedConnectionIsRetriedThenReported) {
  const std::string url = "http://127.0.0.1:" + std::to_string(UnusedPort()) + "/x.tar";
  EXPECT_THAT(ErrorOf([&] { OpenByteSource(url, Fast()); }),
              AllOf(HasSubstr("\"" + url + "\": cannot open: curl error 7 (Couldn't connect to server"),
                    HasSubstr(") after 3 attempts")));
}

TEST_F(HttpFaultsTest, SequentialReaderRecoversFromFailedReadAhead) {
  // The first requests after the probe and two reads fail four times in all, read-ahead ones too;
  // five attempts per fetch absorb them in any order the threads take them.
  const std::vector<uint8_t> bytes = AddFile("scan_faults.bin", 3 << 20);
  FetchOptions options = Fast();
  options.read_ahead_bytes = 1 << 20;
  options.max_retries = 4;
  const std::unique_ptr<HttpSource> source = Open("f/skip=3,fail=503:4/scan_faults.bin", options);
  for (int64_t offset = 0; offset < (3 << 20); offset += 8192) {
    ASSERT_EQ(ReadAll(*source, offset, 8192), Slice(bytes, offset, 8192)) << offset;
  }
  EXPECT_EQ(source->stats().failed_attempts, 4);
  EXPECT_GT(source->stats().read_ahead_blocks, 0);
}

TEST_F(HttpFaultsTest, SequentialReaderFailureNamesItsOwnRead) {
  AddFile("scan_dead.bin", 3 << 20);
  FetchOptions options = Fast();
  options.read_ahead_bytes = 1 << 20;
  options.max_retries = 1;
  const std::unique_ptr<HttpSource> source = Open("f/skip=3,fail=503:all/scan_dead.bin", options);
  std::string error;
  int64_t offset = 0;
  for (; offset < (3 << 20) && error.empty(); offset += 8192) error = ErrorOf([&] { ReadAll(*source, offset, 8192); });
  EXPECT_EQ(error, "\"" + server_->Url("f/skip=3,fail=503:all/scan_dead.bin") + "\": expected 8192 bytes at offset " +
                       std::to_string(offset - 8192) + ": HTTP 503 after 2 attempts");
}

TEST_F(HttpFaultsTest, ClosingASourceAbortsItsReadAhead) {
  AddFile("scan_slow.bin", 4 << 20);
  FetchOptions options = Fast();
  options.read_ahead_bytes = 1 << 20;  // blocks of 128 KiB
  // Requests past the first block (the read-ahead's) hang for 30 s.
  auto source = Open("f/from=131072,delay=99/scan_slow.bin", options);
  std::vector<uint8_t> out(4096);
  for (int64_t offset = 0; offset < 3 * 4096; offset += 4096) source->ReadAt(offset, out.data(), 4096);
  EXPECT_GT(source->stats().read_ahead_blocks, 0);
  const auto start = std::chrono::steady_clock::now();
  source.reset();
  EXPECT_LT(SecondsSince(start), 5.0);
}

TEST_F(HttpFaultsTest, BadOptionsAreRejectedByName) {
  FetchOptions options = Fast();
  options.max_connections = 0;
  EXPECT_THAT(ErrorOf([&] { Open("faults.bin", options); }),
              HasSubstr("faults.bin\": fetch option max_connections must be >= 1, got 0"));
  options = Fast();
  options.retry_base_ms = -5;
  EXPECT_THAT(ErrorOf([&] { Open("faults.bin", options); }), HasSubstr("retry_base_ms must be >= 0, got -5"));
  EXPECT_EQ(server_->counts().requests, 0);
}

// A self-signed certificate for 127.0.0.1 from the openssl CLI; "" when there is none.
bool MakeCertificate(const std::string& dir) {
  const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                              "-addext subjectAltName=IP:127.0.0.1 -keyout " + dir + "/key.pem -out " + dir +
                              "/cert.pem >/dev/null 2>&1";
  return std::system(command.c_str()) == 0 && std::filesystem::exists(dir + "/cert.pem");
}

TEST_F(HttpFaultsTest, HttpsVerifiesTheServerWithTheGivenCa) {
  const TempDir tls;
  if (!MakeCertificate(tls.path())) GTEST_SKIP() << "no openssl CLI to make a self-signed certificate";
  const std::unique_ptr<TestHttpServer> server =
      TestHttpServer::Start(dir_->path(), tls.path() + "/cert.pem", tls.path() + "/key.pem");
  const std::string url = server->Url("faults.bin");
  ASSERT_EQ(url.rfind("https://", 0), 0u);
  FetchOptions options = Fast();
  options.ca_file = tls.path() + "/cert.pem";
  const std::unique_ptr<ByteSource> source = OpenByteSource(url, options);
  EXPECT_EQ(ReadAll(*source, 777, 50000), Slice(file_, 777, 50000));
  // Without the CA the certificate does not verify: no retries for that.
  EXPECT_THAT(ErrorOf([&] { OpenByteSource(url, Fast()); }),
              AllOf(HasSubstr("\"" + url + "\": cannot open: curl error 60 ("), HasSubstr(") after 1 attempt")));
}

}  // namespace
}  // namespace conveyor::ops::testing
