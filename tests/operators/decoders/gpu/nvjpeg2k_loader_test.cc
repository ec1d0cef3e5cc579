// The nvJPEG2000 loader: search order, errors for a missing and a wrong library, status messages,
// the shared load per path. Needs no GPU and no nvJPEG2000 (the build machines have neither).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "operators/decoders/nvjpeg2k/nvjpeg2k_loader.h"

namespace conveyor::nvjpeg2k {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

nvjpeg::GetEnv FakeEnv(const std::map<std::string, std::string>& vars) {
  auto owned = std::make_shared<std::map<std::string, std::string>>(vars);
  return [owned](const char* name) -> const char* {
    auto it = owned->find(name);
    return it == owned->end() ? nullptr : it->second.c_str();
  };
}

TEST(Nvjpeg2kLoader, AnExplicitPathIsTheOnlyCandidate) {
  EXPECT_THAT(Nvjpeg2kSearchPaths("/opt/x/libnvjpeg2k.so.0", FakeEnv({{"VIRTUAL_ENV", "/nonexistent"}})),
              ElementsAre("/opt/x/libnvjpeg2k.so.0"));
}

TEST(Nvjpeg2kLoader, SonamesFirstThenThePipFoldersNvjpegSearchesToo) {
  const fs::path root = fs::path(::testing::TempDir()) / "nvjpeg2k_search_order";
  fs::remove_all(root);
  const fs::path venv_site = root / "venv/lib/python3.12/site-packages";
  const fs::path pythonpath = root / "pp";
  fs::create_directories(venv_site);
  fs::create_directories(pythonpath);
  const nvjpeg::GetEnv env = FakeEnv({{"VIRTUAL_ENV", (root / "venv").string()}, {"PYTHONPATH", pythonpath.string()}});
  const std::vector<std::string> paths = Nvjpeg2kSearchPaths("", env);
  ASSERT_GE(paths.size(), 4u);
  EXPECT_EQ(paths[0], "libnvjpeg2k.so.0");
  EXPECT_EQ(paths[1], "libnvjpeg2k.so");
  EXPECT_EQ(paths[2], venv_site.string() + "/nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0");
  EXPECT_EQ(paths[3], pythonpath.string() + "/nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0");
  // One candidate per site folder nvJPEG's search uses, in the same order.
  const std::vector<std::string> sites = nvjpeg::PythonSiteFolders(env);
  ASSERT_EQ(paths.size(), 2 + sites.size());
  for (size_t i = 0; i < sites.size(); ++i) EXPECT_EQ(paths[2 + i], sites[i] + "/nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0");
}

TEST(Nvjpeg2kLoader, AMissingLibraryListsEveryPathTriedAndWhy) {
  try {
    Nvjpeg2kLibrary::Open({"/nonexistent/a/libnvjpeg2k.so.0", "/nonexistent/b/libnvjpeg2k.so"});
    FAIL() << "opened a library that does not exist";
  } catch (const Nvjpeg2kUnavailable& e) {
    EXPECT_THAT(e.what(), HasSubstr("nvJPEG2000: no library could be opened; tried, in order:"));
    EXPECT_THAT(e.what(), HasSubstr("\n  /nonexistent/a/libnvjpeg2k.so.0: "));
    EXPECT_THAT(e.what(), HasSubstr("\n  /nonexistent/b/libnvjpeg2k.so: "));
    EXPECT_THAT(e.what(), HasSubstr("No such file"));
  }
}

// A library that opens but is not nvJPEG2000 is named with the first entry point it lacks, and
// no later candidate is tried behind the user's back.
TEST(Nvjpeg2kLoader, AWrongLibraryNamesTheMissingSymbol) {
  try {
    Nvjpeg2kLibrary::Open({"libm.so.6", "/nonexistent/libnvjpeg2k.so.0"});
    FAIL() << "libm passed for nvJPEG2000";
  } catch (const Nvjpeg2kUnavailable& e) {
    EXPECT_THAT(e.what(), HasSubstr("nvJPEG2000: symbol \"nvjpeg2kGetProperty\" not found in \"libm.so.6\""));
  }
}

TEST(Nvjpeg2kLoader, TheSharedLoadOfAMissingPathIsNullWithTheReasonEveryTime) {
  for (int i = 0; i < 2; ++i) {
    std::string why;
    EXPECT_EQ(SharedNvjpeg2k("/nonexistent/shared/libnvjpeg2k.so.0", &why), nullptr);
    EXPECT_THAT(why, HasSubstr("/nonexistent/shared/libnvjpeg2k.so.0"));
  }
  EXPECT_EQ(SharedNvjpeg2k("/nonexistent/shared/libnvjpeg2k.so.0"), nullptr);  // no reason asked: none given
}

TEST(Nvjpeg2kLoader, FailedCallsNameTheCallTheStatusAndWhere) {
  EXPECT_NO_THROW(CheckNvjpeg2k(NVJPEG2K_STATUS_SUCCESS, "nvjpeg2kStreamParse(...)"));
  try {
    CONVEYOR_NVJPEG2K_CHECK(NVJPEG2K_STATUS_BAD_JPEG, "op \"dec\": sample 3 (a.jp2)");
    FAIL() << "no throw";
  } catch (const Nvjpeg2kError& e) {
    EXPECT_EQ(e.status(), NVJPEG2K_STATUS_BAD_JPEG);
    EXPECT_THAT(e.what(), HasSubstr("NVJPEG2K_STATUS_BAD_JPEG failed: NVJPEG2K_STATUS_BAD_JPEG (3): op \"dec\": sample 3 (a.jp2)"));
  }
  EXPECT_STREQ(StatusName(static_cast<nvjpeg2kStatus_t>(42)), "nvjpeg2kStatus_t(unknown)");
  EXPECT_STREQ(StatusName(NVJPEG2K_STATUS_IMPLEMENTATION_NOT_SUPPORTED), "NVJPEG2K_STATUS_IMPLEMENTATION_NOT_SUPPORTED");
}

}  // namespace
}  // namespace conveyor::nvjpeg2k
