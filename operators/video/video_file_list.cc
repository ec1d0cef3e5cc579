#include "operators/video/video_file_list.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace conveyor::ops::video {
namespace {

std::optional<double> Number(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::vector<VideoFileEntry> ParseVideoFileList(const std::string& list_path, const std::string& where) {
  std::ifstream in(list_path);
  if (!in) {
    throw InvalidArgument(where + ": cannot open file_list \"" + list_path + "\": " + std::strerror(errno));
  }
  const std::filesystem::path base = std::filesystem::path(list_path).parent_path();
  std::vector<VideoFileEntry> entries;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string field; fields >> field;) f.push_back(field);
    if (f.empty() || f[0][0] == '#') continue;
    const std::string here = where + ": " + list_path + ":" + std::to_string(number);
    if (f.size() < 2 || f.size() > 4) {
      throw InvalidArgument(here + ": expected \"path label [start [end]]\", got \"" + line + "\"");
    }
    char* end = nullptr;
    errno = 0;
    const long long label = std::strtoll(f[1].c_str(), &end, 10);
    if (end == f[1].c_str() || *end != '\0' || errno == ERANGE || label < std::numeric_limits<int32_t>::min() ||
        label > std::numeric_limits<int32_t>::max()) {
      throw InvalidArgument(here + ": expected an int32 label after the path, got \"" + f[1] + "\"");
    }
    VideoFileEntry e;
    e.path = std::filesystem::path(f[0]).is_absolute() ? f[0] : (base / f[0]).string();
    e.label = static_cast<int32_t>(label);
    e.line = number;
    for (size_t k = 2; k < f.size(); ++k) {
      const std::optional<double> v = Number(f[k]);
      if (!v) {
        throw InvalidArgument(here + ": expected a number as the range's " + (k == 2 ? "start" : "end") + ", got \"" +
                              f[k] + "\"");
      }
      (k == 2 ? e.start : e.end) = v;
    }
    entries.push_back(std::move(e));
  }
  if (entries.empty()) throw InvalidArgument(where + ": file_list \"" + list_path + "\" lists no files");
  return entries;
}

}  // namespace conveyor::ops::video
