#include "operators/readers/shards/shard_paths.h"

#include <glob.h>

#include <charconv>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"

namespace conveyor::ops {
namespace {

bool ParseNumber(const std::string& text, int64_t& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && value >= 0;
}

// The alternatives of one brace group's body: "a,b,c" or "000..099".
std::vector<std::string> Alternatives(const std::string& body, const std::string& error) {
  const size_t dots = body.find("..");
  if (body.find(',') != std::string::npos || dots == std::string::npos) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t comma; (comma = body.find(',', start)) != std::string::npos; start = comma + 1) {
      out.push_back(body.substr(start, comma - start));
    }
    out.push_back(body.substr(start));
    return out;
  }
  const std::string lo = body.substr(0, dots), hi = body.substr(dots + 2);
  int64_t first = 0, last = 0;
  if (!ParseNumber(lo, first) || !ParseNumber(hi, last)) {
    throw InvalidArgument(error + "expected a range of whole numbers such as {000..099}, got {" + body + "}");
  }
  if (last < first) throw InvalidArgument(error + "the range {" + body + "} runs backwards");
  if (last - first >= kMaxShardPaths) {
    throw InvalidArgument(error + "the range {" + body + "} has more than " + std::to_string(kMaxShardPaths) + " entries");
  }
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(last - first + 1));
  for (int64_t i = first; i <= last; ++i) {
    std::string n = std::to_string(i);
    if (n.size() < lo.size()) n.insert(0, lo.size() - n.size(), '0');
    out.push_back(std::move(n));
  }
  return out;
}

bool HasGlob(const std::string& path) { return path.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::vector<std::string> ExpandBraces(const std::string& entry, const std::string& error) {
  const size_t open = entry.find('{');
  const size_t close = entry.find('}');
  if (open == std::string::npos) {
    if (close != std::string::npos) throw InvalidArgument(error + "unbalanced \"}\" in \"" + entry + "\"");
    return {entry};
  }
  const size_t end = entry.find('}', open);
  if (end == std::string::npos || entry.find('{', open + 1) < end) {
    throw InvalidArgument(error + "unbalanced \"{\" in \"" + entry + "\" (groups do not nest)");
  }
  if (close < open) throw InvalidArgument(error + "unbalanced \"}\" in \"" + entry + "\"");
  const std::string head = entry.substr(0, open);
  const std::vector<std::string> tails = ExpandBraces(entry.substr(end + 1), error);
  std::vector<std::string> out;
  for (const std::string& alt : Alternatives(entry.substr(open + 1, end - open - 1), error)) {
    if (static_cast<int64_t>(out.size() + tails.size()) > kMaxShardPaths) {
      throw InvalidArgument(error + "\"" + entry + "\" expands to more than " + std::to_string(kMaxShardPaths) +
                            " paths");
    }
    for (const std::string& tail : tails) out.push_back(head + alt + tail);
  }
  return out;
}

std::vector<std::string> ExpandShardPaths(const std::vector<std::string>& entries, const std::string& arg,
                                          const std::string& where) {
  const std::string error = where + ": " + arg + ": ";
  std::vector<std::string> out;
  for (const std::string& entry : entries) {
    for (const std::string& path : ExpandBraces(entry, error)) {
      if (IsUrl(path) || !HasGlob(path)) {
        out.push_back(path);
        continue;
      }
      glob_t matches{};
      const int rc = ::glob(path.c_str(), GLOB_ERR, nullptr, &matches);
      if (rc == GLOB_NOMATCH || (rc == 0 && matches.gl_pathc == 0)) {
        ::globfree(&matches);
        throw InvalidArgument(error + "\"" + path + "\" matches no file");
      }
      if (rc != 0) {
        ::globfree(&matches);
        throw InvalidArgument(error + "cannot list \"" + path + "\" (a folder on the way is unreadable)");
      }
      for (size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);  // glob sorts them
      ::globfree(&matches);
    }
    if (static_cast<int64_t>(out.size()) > kMaxShardPaths) {
      throw InvalidArgument(error + "more than " + std::to_string(kMaxShardPaths) + " paths");
    }
  }
  return out;
}

}  // namespace conveyor::ops
