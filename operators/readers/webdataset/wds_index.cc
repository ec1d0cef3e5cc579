#include "operators/readers/webdataset/wds_index.h"

#include <charconv>
#include <sstream>

#include "core/error.h"

namespace conveyor::ops {
namespace {

constexpr int64_t kTarBlock = 512;

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; in >> f;) out.push_back(std::move(f));
  return out;
}

bool ParseCount(const std::string& text, int64_t& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0;
}

}  // namespace

std::optional<MemberName> SplitMemberName(const std::string& name) {
  const size_t slash = name.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  if (base >= name.size() || name[base] == '.') return std::nullopt;
  const size_t dot = name.find('.', base);
  if (dot == std::string::npos) return MemberName{name, ""};
  return MemberName{name.substr(0, dot), name.substr(dot + 1)};
}

std::vector<ShardSample> GroupMembers(const std::vector<TarMember>& members) {
  std::vector<ShardSample> samples;
  for (const TarMember& m : members) {
    std::optional<MemberName> split = SplitMemberName(m.name);
    if (!split) continue;
    if (samples.empty() || samples.back().key != split->key) samples.push_back(ShardSample{split->key, {}, 0});
    samples.back().components.push_back(ShardComponent{std::move(split->ext), m.offset, m.size});
  }
  return samples;
}

std::string FormatWdsIndex(const std::vector<ShardSample>& samples, const std::string& shard) {
  std::string out = "v1.2 " + std::to_string(samples.size()) + "\n";
  for (const ShardSample& s : samples) {
    bool first = true;
    for (const ShardComponent& c : s.components) {
      const std::string name = s.key + (c.ext.empty() ? "" : "." + c.ext);
      if (name.find_first_of(" \t\r\n\v\f") != std::string::npos) {
        throw InvalidArgument("shard \"" + shard + "\": member \"" + name + "\" has whitespace in its name, which the "
                              "index format (whitespace-separated fields) cannot hold");
      }
      out += (first ? "" : " ") + (c.ext.empty() ? std::string("-") : c.ext) + " " + std::to_string(c.offset) + " " +
             std::to_string(c.size) + " " + name;
      first = false;
    }
    out += "\n";
  }
  return out;
}

std::vector<ShardSample> ParseWdsIndex(const std::string& text, const std::string& index_path) {
  std::istringstream in(text);
  std::string line;
  const auto fail = [&](int64_t line_number, const std::string& what) {
    return InvalidArgument("index \"" + index_path + "\" line " + std::to_string(line_number) + ": " + what);
  };
  std::getline(in, line);
  const std::vector<std::string> head = Fields(line);
  int64_t count = 0;
  if (head.size() != 2 || (head[0] != "v1.1" && head[0] != "v1.2") || !ParseCount(head[1], count) || count < 1) {
    throw fail(1, "expected \"v1.2 <number of samples>\" (or v1.1: DALI's wds2idx format), got \"" + line + "\"");
  }
  const bool named = head[0] == "v1.2";
  const size_t per_component = named ? 4 : 3;
  std::vector<ShardSample> samples;
  samples.reserve(static_cast<size_t>(std::min<int64_t>(count, 1 << 20)));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t number = i + 2;
    if (!std::getline(in, line)) {
      throw fail(number, "the header announces " + std::to_string(count) + " samples, the file ends after " +
                             std::to_string(i));
    }
    const std::vector<std::string> f = Fields(line);
    if (f.empty() || f.size() % per_component != 0) {
      throw fail(number, std::string("expected ") + (named ? "\"<ext> <offset> <size> <name>\"" : "\"<ext> <offset> <size>\"") +
                             " per component, got \"" + line + "\"");
    }
    ShardSample sample{named ? "" : "#" + std::to_string(number), {}, number};
    for (size_t k = 0; k < f.size(); k += per_component) {
      ShardComponent c{f[k] == "-" ? "" : f[k], 0, 0};
      if (!ParseCount(f[k + 1], c.offset) || !ParseCount(f[k + 2], c.size)) {
        throw fail(number, "expected a byte offset and size (integers >= 0) after \"" + f[k] + "\", got \"" +
                               f[k + 1] + " " + f[k + 2] + "\"");
      }
      if (c.offset % kTarBlock != 0) {
        throw fail(number, "offset " + std::to_string(c.offset) + " of \"" + f[k] +
                               "\" is not a multiple of 512 (a tar member's data starts on a block)");
      }
      if (named) {
        const std::optional<MemberName> split = SplitMemberName(f[k + 3]);
        const std::string key = split ? split->key : f[k + 3];
        if (sample.key.empty()) sample.key = key;
        if (key != sample.key) {
          throw fail(number, "member \"" + f[k + 3] + "\" has key \"" + key + "\", the sample's first member \"" +
                                 sample.key + "\": one line is one sample");
        }
      }
      sample.components.push_back(std::move(c));
    }
    samples.push_back(std::move(sample));
  }
  while (std::getline(in, line)) {
    if (!Fields(line).empty()) {
      throw fail(count + 2, "the header announces " + std::to_string(count) + " samples, but more lines follow");
    }
  }
  return samples;
}

}  // namespace conveyor::ops
